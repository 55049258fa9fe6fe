/**
 * `quota-guard run [--http [host:port]] [--credential ID] [--no-backfill]`: run the configured
 * schedules until SIGINT/SIGTERM — one trending job per region (staggered) and the backfill, never
 * two runs of one job at once. On the first signal it stops ticking, lets running pages finish,
 * closes the ledger and the cache and exits 0; a second signal exits 130 at once.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../errors.js';
import {
  DEFAULT_HTTP_HOST,
  DEFAULT_HTTP_PORT,
  isLoopback,
  parseHttpAddress,
} from '../../metrics/http-address.js';
import type { startService } from '../../scheduler/service.js';
import { action } from '../action.js';
import { configOption, type JobCommandOptions } from '../options.js';

interface RunOptions extends JobCommandOptions {
  http?: string | boolean;
  backfill: boolean;
  decisions?: boolean;
  tokens?: string;
}

export function register(program: Command): void {
  configOption(
    program
      .command('run')
      .description(
        'run the trending and backfill schedules until SIGINT/SIGTERM; optionally serve the status page, /metrics and /healthz',
      )
      .option(
        '--http [address]',
        `serve the status page (/), /metrics and /healthz on host:port (default ${DEFAULT_HTTP_HOST}:${DEFAULT_HTTP_PORT}, loopback)`,
      )
      .option('--credential <id>', 'the credential the jobs spend (default: the first in the config)')
      .option('--no-backfill', 'schedule the trending jobs only')
      .option('--decisions', 'with --http: also serve the decision API under /v1/ (docs/http-api.md)')
      .option('--tokens <file>', 'bearer tokens of the decision API (required beyond loopback)'),
  ).action(
    action(async (opts: RunOptions) => {
      const [{ preflight }, { openContext }, { abortOnSignals }, { startService }] = await Promise.all([
        import('../job-commands.js'),
        import('../context.js'),
        import('../../job-library/job-run.js'),
        import('../../scheduler/service.js'),
      ]);
      const { config, credential } = await preflight(opts, () => undefined);
      const http =
        opts.http === undefined || opts.http === false
          ? undefined
          : parseHttpAddress(opts.http === true ? String(DEFAULT_HTTP_PORT) : opts.http);
      if ((opts.decisions || opts.tokens !== undefined) && !http) {
        throw new InvalidArgumentError('--decisions', 'the decision API is served on --http: add --http');
      }
      // A store that is down at start is the store-down policy's business (and /healthz says so).
      const { ledger, logger } = await openContext(opts, { allowUnreachable: true, config });
      if (http && !isLoopback(http.host))
        logger.warn({ host: http.host }, 'serving /metrics and /healthz beyond loopback');
      const { signal, dispose } = abortOnSignals();
      let service: Awaited<ReturnType<typeof startService>>;
      try {
        service = await startService({
          config,
          ledger,
          logger,
          credential,
          backfill: opts.backfill,
          ...(http ? { http } : {}),
          ...(http && opts.decisions
            ? { decisions: opts.tokens !== undefined ? { tokensFile: opts.tokens } : {} }
            : {}),
        });
      } catch (e) {
        dispose();
        await ledger.close();
        throw e;
      }
      try {
        const why = await new Promise<string>((resolve) =>
          signal.addEventListener('abort', () => resolve('signal'), { once: true }),
        );
        await service.stop(why);
      } finally {
        dispose();
      }
      return 0;
    }),
  );
}
