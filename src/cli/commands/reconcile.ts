/**
 * `quota-guard reconcile [--json]`: hold the ledger against the upstream's own count once. For each
 * Google Cloud project a credential names, Cloud Monitoring's per-minute count since the upstream's
 * midnight (up to `reconcile.lag` ago) is compared with what the ledger recorded, and what the
 * ledger did not see is recorded as outside spend, which the ceilings count like any other.
 * Exit 0 when every project was reconciled (a ledger above the count is reported, not an error);
 * otherwise the first failure's status: 78 credentials, role or project id, 69 Monitoring
 * unreachable, too slow or answering in part, 75 Monitoring's own rate limit.
 */
import type { Command } from 'commander';
import { lazyAction } from '../action.js';
import { configOption } from '../options.js';

export function register(program: Command): void {
  configOption(
    program
      .command('reconcile')
      .description("hold the ledger against the upstream's own count (Cloud Monitoring) once")
      .option('--json', 'print the result as JSON'),
  ).action(lazyAction(() => import('../actions/reconcile.js')));
}
