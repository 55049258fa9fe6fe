/**
 * `quota-guard serve [--http [host:port]] [--refresh N] [--decisions [--tokens FILE]]`: for jobs run
 * from cron, serve the status page (`/`), `/metrics` and `/healthz` from what the ledger's store
 * holds — whichever host spent or ran — until SIGINT/SIGTERM. Without `--decisions` it only reads:
 * no job runs, nothing is spent or written. With it, the decision API (`/v1/…`, docs/http-api.md)
 * spends for jobs in any language.
 */
import type { Command } from 'commander';
import { ConfigError, InvalidArgumentError } from '../../errors.js';
import { DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT, isLoopback, parseHttpAddress } from '../../http-address.js';
import { action } from '../action.js';
import { type ConfigOptions, configOption, parsePositiveInt } from '../options.js';

interface ServeOptions extends ConfigOptions {
  http: string | boolean;
  refresh: number;
  decisions?: boolean;
  tokens?: string;
  tlsCert?: string;
  tlsKey?: string;
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
      .option('--refresh <seconds>', 'how often the status page reloads itself', parsePositiveInt, 30)
      .option(
        '--decisions',
        'also serve the decision API under /v1/ (spend, report, status): jobs spend over HTTP',
      )
      .option(
        '--tokens <file>',
        'bearer tokens of the decision API (required beyond loopback; docs/http-api.md)',
      )
      .option('--tls-cert <file>', 'serve HTTPS: the certificate chain (PEM)')
      .option('--tls-key <file>', 'serve HTTPS: the private key (PEM)'),
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
        import('../../runs/job-run.js'),
        import('../../history/index.js'),
        import('../../metrics/metrics.js'),
        import('../../metrics/page.js'),
        import('../../metrics/server.js'),
      ]);
      const config = await loadCliConfig(opts.config);
      const http = parseHttpAddress(opts.http === true ? String(DEFAULT_HTTP_PORT) : String(opts.http));
      if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined)) {
        throw new InvalidArgumentError('--tls-cert', 'HTTPS needs both --tls-cert and --tls-key');
      }
      if (opts.tokens !== undefined && !opts.decisions) {
        throw new InvalidArgumentError('--tokens', 'is for the decision API: add --decisions');
      }
      if (opts.decisions && opts.tokens === undefined && !isLoopback(http.host)) {
        throw new ConfigError(
          [
            `the decision API serves beyond loopback (${http.host}) only with bearer tokens: give --tokens <file> (docs/http-api.md)`,
          ],
          'QG_CONFIG_INVALID',
          { field: '--tokens' },
        );
      }
      const api = opts.decisions ? await import('../../api/index.js') : undefined;
      const tls = opts.tlsCert && opts.tlsKey ? api?.readTls(opts.tlsCert, opts.tlsKey) : undefined;
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
        // Without --decisions only for the backfill's pacing line: this guard never spends.
        const guard = (await import('../../guard/guard.js')).createGuard({
          config,
          ledger,
          logger,
          scheduledNeed: (await import('../../cron-runs.js')).scheduledNeed(config),
          onEvent: metrics.guardEvent,
        });
        const routes = api?.decisionApiFor({
          guard,
          host: http.host,
          ...(opts.tokens !== undefined ? { tokensFile: opts.tokens } : {}),
          logger,
          onRequest: metrics.apiRequest,
        });
        srv = await server.startMetricsServer({
          ...(routes ? { routes } : {}),
          ...(tls ? { tls } : {}),
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
          routes
            ? `serving the decision API at ${srv.url}/v1/, ${srv.url}/metrics, ${srv.url}/healthz and the status page at ${srv.url}/`
            : `serving ${srv.url}/metrics, ${srv.url}/healthz and the status page at ${srv.url}/ (reading the ledger only)`,
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
