/**
 * Cron entry for the backfill, runnable from a checkout:
 *
 *   npx tsx jobs/backfill.ts [--max-units N] [--config FILE]
 *
 * The same as `quota-guard backfill …`: resumes where the last run stopped, stops at the headroom
 * line. Exit codes: 0 done, 75 stopped by the budget, 69 unavailable, 78 configuration error.
 */
import { main } from '../src/cli/main.js';

process.exitCode = await main([
  process.argv[0] ?? 'node',
  'quota-guard',
  'backfill',
  ...process.argv.slice(2),
]);
