/**
 * `quota-guard serve [--http [host:port]] [--refresh N] [--decisions [--tokens FILE]]`: for jobs run
 * from cron, serve the status page (`/`), `/metrics` and `/healthz` from what the ledger's store
 * holds — whichever host spent or ran — until SIGINT/SIGTERM. Without `--decisions` it only reads:
 * no job runs, nothing is spent or written. With it, the decision API (`/v1/…`, docs/http-api.md)
 * spends for jobs in any language.
 */
import type { Command } from 'commander';
import { DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT } from '../../http-address.js';
import { lazyAction } from '../action.js';
import { callerOptions, configOption, parsePositiveInt } from '../options.js';

export function register(program: Command): void {
  configOption(
    callerOptions(
      program
        .command('serve')
        .description(
          'serve the status page, /metrics and /healthz from the ledger’s store (for jobs run from cron); with --decisions also the decision API, which spends',
        )
        .option(
          '--http [address]',
          `host:port to listen on (default ${DEFAULT_HTTP_HOST}:${DEFAULT_HTTP_PORT}, loopback)`,
          true,
        )
        .option('--refresh <seconds>', 'how often the status page reloads itself', parsePositiveInt, 30)
        .option(
          '--decisions',
          'also serve the decision API under /v1/ (spend, report, runs, record, void, status): jobs spend over HTTP, so serve writes the ledger',
        )
        .option(
          '--tokens <file>',
          'bearer tokens of the decision API (required beyond loopback; docs/http-api.md)',
        )
        .option('--tls-cert <file>', 'serve HTTPS: the certificate chain (PEM)')
        .option('--tls-key <file>', 'serve HTTPS: the private key (PEM)'),
    ),
  ).action(lazyAction(() => import('../actions/serve.js')));
}
