/**
 * Cron entry for the regional trending job, runnable from a checkout:
 *
 *   npx tsx jobs/trending.ts [--region US …] [--config FILE]
 *
 * The same as `quota-guard fetch …`. Exit codes: 0 done, 75 stopped by the budget (run again
 * later), 69 store or upstream unavailable, 78 configuration error. See jobs/crontab.example.
 */
import { main } from '../src/cli/main.js';

process.exitCode = await main([process.argv[0] ?? 'node', 'quota-guard', 'fetch', ...process.argv.slice(2)]);
