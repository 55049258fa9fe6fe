/**
 * `quota-guard serve`: the action (its options are declared in src/cli/commands/serve.ts). The
 * decision API is imported only with `--decisions`: without it serve only reads.
 */

import { ConfigError, InvalidArgumentError } from '../../errors.js';
import { DEFAULT_HTTP_PORT, isLoopback, parseHttpAddress } from '../../http-address.js';
import { createMetrics } from '../../metrics/metrics.js';
import { renderStatusPage, statusPageData } from '../../metrics/page.js';
import { startMetricsServer } from '../../metrics/server.js';
import { abortOnSignals } from '../../runs/job-run.js';
import { trendingLabels } from '../../youtube/job-names.js';
import type { ServeOptions } from '../command-options.js';
import { loadCliConfig } from '../config.js';
import { openContext } from '../context.js';

export async function run(opts: ServeOptions): Promise<number> {
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
  // Read before the store opens: a missing or malformed file creates nothing.
  const tokens = opts.tokens !== undefined && api ? new api.TokenFile(opts.tokens) : undefined;
  // A store that is down at start: /healthz says so and the page answers 503 until it is back.
  // Without the decision API it only reads: a SQLite ledger that does not exist yet is
  // QG_STORE_NOT_FOUND (66), never created. With it, it spends, and opens the store as `spend` does.
  // One handle, as every command opens it: the ledger, the one guard over it (the decision API's
  // spends, the backfill's pacing line on the page) and the run history.
  const ctx = await openContext(opts, {
    allowUnreachable: true,
    config,
    readOnly: opts.decisions !== true,
    history: true,
  });
  const { ledger, guard, logger, qg } = ctx;
  let srv: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  let unsubscribe: (() => void) | undefined;
  // Which signal stopped it, for the line that says so.
  let stoppedBy = 'its end';
  const onSignal = (s: NodeJS.Signals) => {
    stoppedBy = s;
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  const { signal, dispose } = abortOnSignals();
  try {
    const h = qg.history!;
    const metrics = createMetrics({ config, ledger, history: h });
    unsubscribe = qg.subscribe(metrics.guardEvent);
    const routes = api?.decisionApiFor({
      guard,
      history: h,
      host: http.host,
      ...(tokens !== undefined ? { tokens } : {}),
      logger,
      onRequest: metrics.apiRequest,
      labelsOf: trendingLabels,
    });
    srv = await startMetricsServer({
      ...(routes ? { routes } : {}),
      ...(tls ? { tls } : {}),
      metrics,
      ledger,
      page: async () =>
        renderStatusPage(
          await statusPageData(config, ledger, h, {
            refreshSeconds: opts.refresh,
            pacing: (credential, bucket) => guard.pacingLine(credential, bucket),
          }),
        ),
      ...http,
    });
    if (!isLoopback(http.host)) logger.warn({ host: http.host }, 'serving the status page beyond loopback');
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
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    try {
      await srv?.close();
    } finally {
      unsubscribe?.();
      // Spends the decision API made whose answer never came get one command timeout to be
      // settled; then the history and the ledger close.
      await ctx.close();
    }
    // The last line of a serve: a log that ends without it ended with the process killed.
    if (srv) logger.info({ url: srv.url, by: stoppedBy }, `stopped serving ${srv.url} (${stoppedBy})`);
  }
  return 0;
}
