/**
 * One of the processes of the "4 processes sharing one SQLite file" bench scenario. Opens the
 * ledger, prints `ready`, waits for a line on stdin, runs its spends, prints {n, ms} as JSON.
 * Usage: node --import tsx bench/ledger-sqlite-child.ts <file> <key> <spends> [FULL|NORMAL]
 */
import { openLedger } from '../src/index.js';

const [file, key, count, synchronous] = process.argv.slice(2);
const ledger = await openLedger(
  `sqlite:${file}`,
  synchronous ? { synchronous: synchronous as 'FULL' | 'NORMAL' } : {},
);
const budgets = [{ key: key!, limit: 1_000_000_000, windowMs: 3_600_000 }];
process.stdout.write('ready\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
process.stdin.pause();
const n = Number(count);
const t0 = performance.now();
let allowed = 0;
for (let i = 0; i < n; i++) {
  if ((await ledger.spend({ budgets, cost: 1 + (i % 100), tag: 'bench' })).allowed) allowed++;
}
const ms = performance.now() - t0;
await ledger.close();
process.stdout.write(`${JSON.stringify({ n, allowed, ms })}\n`);
