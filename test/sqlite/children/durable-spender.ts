/**
 * Child process for the durability test: spends one unit after another on an SQLite ledger until
 * it has seen 20 failures, printing `allowed <id>` for each allowed spend (once it is answered) and
 * `failed <code>` for each failure.
 * Usage: node --import tsx durable-spender.ts <file> [FULL|NORMAL]
 */

import { isQuotaGuardError } from '../../../src/errors.js';
import { openLedger } from '../../../src/index.js';

const [file, synchronous] = process.argv.slice(2);
const ledger = await openLedger(
  `sqlite:${file}`,
  synchronous ? { synchronous: synchronous as 'FULL' | 'NORMAL' } : {},
);
const budgets = [{ key: 'qg:{durable}:units', limit: 1_000_000, windowMs: 3_600_000 }];
let failures = 0;
while (failures < 20) {
  try {
    const d = await ledger.spend({ budgets, cost: 1, tag: 'durable' });
    if (d.allowed) process.stdout.write(`allowed ${d.id}\n`);
  } catch (e) {
    failures++;
    process.stdout.write(`failed ${isQuotaGuardError(e) ? e.code : String(e)}\n`);
    if (process.env.QG_DEBUG) process.stderr.write(`${(e as Error).message}\n`);
  }
}
// The file system is gone: closing it would fail too, and there is nothing left to keep.
process.exit(0);
