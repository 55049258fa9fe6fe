/**
 * `quota-guard run [--http [host:port]] [--credential ID] [--no-backfill]`: run the configured
 * schedules until SIGINT/SIGTERM — one trending job per region (staggered) and the backfill, never
 * two runs of one job at once. On the first signal it stops ticking, lets running pages finish,
 * closes the ledger and the cache and exits 0; a second signal exits 130 at once.
 */
import type { Command } from 'commander';
import { DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT } from '../../http-address.js';
import { lazyAction } from '../action.js';
import { callerOptions, jobOptions } from '../options.js';

export function register(program: Command): void {
  jobOptions(
    callerOptions(
      program
        .command('run')
        .description(
          'run the trending and backfill schedules until SIGINT/SIGTERM; optionally serve the status page, /metrics and /healthz',
        )
        .option(
          '--http [address]',
          `serve the status page (/), /metrics and /healthz on host:port (default ${DEFAULT_HTTP_HOST}:${DEFAULT_HTTP_PORT}, loopback)`,
        )
        .option('--no-backfill', 'schedule the trending jobs only')
        .option('--decisions', 'with --http: also serve the decision API under /v1/ (docs/http-api.md)')
        .option('--tokens <file>', 'bearer tokens of the decision API (required beyond loopback)'),
    ),
  ).action(lazyAction(() => import('../actions/run.js')));
}
