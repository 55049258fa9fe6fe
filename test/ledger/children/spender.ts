/**
 * Child process for the concurrency test: many spends in flight on one key with random costs,
 * some refunded. Prints `ready` once connected, waits for a line on stdin, then prints what it saw
 * admitted as one JSON line.
 * Usage: node --import tsx spender.ts '<json options>'
 */
import { openLedger } from '../../../src/index.js';
import { rng } from '../../../src/youtube/simulator/rng.js';

interface Options {
  url: string;
  keyPrefix?: string;
  key: string;
  limit: number;
  windowMs: number;
  spends: number;
  inFlight: number;
  seed: number;
  refundRate: number;
}

const o = JSON.parse(process.argv[2] ?? '{}') as Options;
const ledger = await openLedger(o.url, o.keyPrefix ? { keyPrefix: o.keyPrefix } : {});
const rnd = rng(o.seed).next;
let admitted = 0;
let refunded = 0;
let allowed = 0;
let denied = 0;
let started = 0;

// Start together: say ready once connected, then wait for the parent's go on stdin.
process.stdout.write('ready\n');
await new Promise<void>((resolve) => {
  process.stdin.once('data', () => resolve());
});
process.stdin.pause();
async function worker(): Promise<void> {
  while (started < o.spends) {
    started++;
    const cost = 1 + Math.floor(rnd() * 20);
    const d = await ledger.spend({
      budgets: [{ key: o.key, limit: o.limit, windowMs: o.windowMs }],
      cost,
      tag: `child-${process.pid}`,
    });
    if (!d.allowed) {
      denied++;
      continue;
    }
    allowed++;
    admitted += cost;
    if (rnd() < o.refundRate) {
      await ledger.refund(d);
      refunded += cost;
    }
  }
}
await Promise.all(Array.from({ length: o.inFlight }, worker));
await ledger.close();
process.stdout.write(`${JSON.stringify({ admitted, refunded, allowed, denied })}\n`);
