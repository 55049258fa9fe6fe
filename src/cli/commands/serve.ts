/**
 * `quota-guard serve [--http [host:port]] [--refresh N]`: for jobs run from cron, serve the status
 * page (`/`), `/metrics` and `/healthz` from what the ledger's store holds — whichever host spent or
 * ran — until SIGINT/SIGTERM. It only reads: no job runs, nothing is spent or written.
 */
import type { Command } from 'commander';
import {
  DEFAULT_HTTP_HOST,
  DEFAULT_HTTP_PORT,
  isLoopback,
  parseHttpAddress,
} from '../../metrics/http-address.js';
import { action } from '../action.js';
import { type ConfigOptions, configOption, parsePositiveInt } from '../options.js';

interface ServeOptions extends ConfigOptions {
  http: string | boolean;
  refresh: number;
}

export function register(program: Command): void {
  configOption(
    program
      .command('serve')
      .description(
        'serve the status page, /metrics and /healthz from the ledger’s store (for jobs run from cron); reads only',
      )
      .option(
        '--http [address]',
        `host:port to listen on (default ${DEFAULT_HTTP_HOST}:${DEFAULT_HTTP_PORT}, loopback)`,
        true,
      )
      .option('--refresh <seconds>', 'how often the status page reloads itself', parsePositiveInt, 30),
  ).action(
    action(async (opts: ServeOptions) => {
      const [
        { loadCliConfig },
        { openContext },
        { abortOnSignals },
        { openRunHistory },
        metricsMod,
        page,
        server,
      ] = await Promise.all([
        import('../config.js'),
        import('../context.js'),
        import('../../job-library/job-run.js'),
        import('../../history/index.js'),
        import('../../metrics/metrics.js'),
        import('../../metrics/page.js'),
        import('../../metrics/server.js'),
      ]);
      const config = await loadCliConfig(opts.config);
      const http = parseHttpAddress(opts.http === true ? String(DEFAULT_HTTP_PORT) : String(opts.http));
      // A store that is down at start: /healthz says so and the page answers 503 until it is back.
      // Read only: a SQLite ledger that does not exist yet is QG_STORE_NOT_FOUND (66), never created.
      const { ledger, logger } = await openContext(opts, { allowUnreachable: true, config, readOnly: true });
      let history: Awaited<ReturnType<typeof openRunHistory>> | undefined;
      let srv: Awaited<ReturnType<typeof server.startMetricsServer>> | undefined;
      const { signal, dispose } = abortOnSignals();
      try {
        history = await openRunHistory(config.store);
        const h = history;
        const metrics = metricsMod.createMetrics({ config, ledger, history: h });
        // Only for the backfill's pacing line: this guard never spends.
        const guard = (await import('../../guard/guard.js')).createGuard({ config, ledger, logger });
        srv = await server.startMetricsServer({
          metrics,
          ledger,
          page: async () =>
            page.renderStatusPage(
              await page.statusPageData(config, ledger, h, {
                refreshSeconds: opts.refresh,
                pacing: (credential, bucket) => guard.pacingLine(credential, bucket),
              }),
            ),
          ...http,
        });
        if (!isLoopback(http.host))
          logger.warn({ host: http.host }, 'serving the status page beyond loopback');
        logger.info(
          { url: srv.url },
          `serving ${srv.url}/metrics, ${srv.url}/healthz and the status page at ${srv.url}/ (reading the ledger only)`,
        );
        await new Promise<void>((resolve) => {
          if (signal.aborted) resolve();
          else signal.addEventListener('abort', () => resolve(), { once: true });
        });
      } finally {
        dispose();
        await srv?.close();
        await history?.close();
        await ledger.close();
      }
      return 0;
    }),
  );
}
