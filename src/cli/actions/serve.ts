/**
 * `quota-guard serve`: the action (its options are declared in src/cli/commands/serve.ts). The
 * decision API is imported only with `--decisions`: without it serve only reads.
 *
 * It listens before it opens the store — on `--http`, or on the socket systemd passes (socket
 * activation: a restart then keeps the socket, and clients wait in its queue instead of being
 * refused) — so that a port in use, or a decision API beyond loopback without tokens on an
 * inherited socket, stops it before anything is opened or created.
 */

import { InvalidArgumentError } from '../../errors.js';
import { DEFAULT_HTTP_PORT, isLoopback, parseHttpAddress } from '../../http-address.js';
import { limitRepeats } from '../../log-limit.js';
import { createMetrics } from '../../metrics/metrics.js';
import { renderStatusPage, statusPageData } from '../../metrics/page.js';
import { listenHttp } from '../../metrics/server.js';
import { abortOnSignals } from '../../runs/job-run.js';
import { type ReconcileSchedule, reconcileSchedule, reconciles } from '../../scheduler/reconcile.js';
import { trendingLabels } from '../../youtube/job-names.js';
import type { ServeOptions } from '../command-options.js';
import { loadCliConfig } from '../config.js';
import { type Context, cliLogger, openContext } from '../context.js';

export async function run(opts: ServeOptions): Promise<number> {
  const config = await loadCliConfig(opts.config);
  const http = parseHttpAddress(opts.http === true ? String(DEFAULT_HTTP_PORT) : String(opts.http));
  if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined)) {
    throw new InvalidArgumentError('--tls-cert', 'HTTPS needs both --tls-cert and --tls-key');
  }
  if (opts.tokens !== undefined && !opts.decisions) {
    throw new InvalidArgumentError('--tokens', 'is for the decision API: add --decisions');
  }
  for (const [flag, given] of [
    ['--allow-host', opts.allowHost],
    ['--allow-origin', opts.allowOrigin],
  ] as const) {
    if (given?.length && !opts.decisions) {
      throw new InvalidArgumentError(flag, 'is for the decision API: add --decisions');
    }
  }
  const api = opts.decisions ? await import('../../api/index.js') : undefined;
  api?.checkDecisionsAddress(http.host, opts.tokens !== undefined);
  const callers = api?.callerRules(opts.allowHost, opts.allowOrigin);
  const tls =
    opts.tlsCert && opts.tlsKey
      ? (await import('../../api/setup.js')).readTls(opts.tlsCert, opts.tlsKey)
      : undefined;
  // Read before the store opens: a missing or malformed file creates nothing.
  const tokens =
    opts.tokens !== undefined && api
      ? new api.TokenFile(
          opts.tokens,
          undefined,
          config.credentials.map((c) => c.id),
        )
      : undefined;
  const listener = await listenHttp({ ...http, ...(tls ? { tls } : {}), inherit: true });
  // An outage refuses every spend; its warnings are said once per interval, with a count.
  const logger = limitRepeats(cliLogger());
  let ctx: Context | undefined;
  let unsubscribe: (() => void) | undefined;
  let reconcile: ReconcileSchedule | undefined;
  // Which signal stopped it, for the line that says so.
  let stoppedBy = 'its end';
  const onSignal = (s: NodeJS.Signals) => {
    stoppedBy = s;
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  const { signal, dispose } = abortOnSignals();
  try {
    if (listener.inherited && api) api.checkDecisionsAddress(listener.host, tokens !== undefined);
    // A store that is down at start: /healthz says so and the page answers 503 until it is back.
    // Without the decision API it only reads: a SQLite ledger that does not exist yet is
    // QG_STORE_NOT_FOUND (66), never created. With it, it spends, and opens the store as `spend` does.
    // One handle, as every command opens it: the ledger, the one guard over it (the decision API's
    // spends, the backfill's pacing line on the page) and the run history.
    ctx = await openContext(opts, {
      allowUnreachable: true,
      config,
      readOnly: opts.decisions !== true,
      history: true,
      logger,
    });
    const { ledger: l, guard, qg } = ctx;
    const h = qg.history!;
    const metrics = createMetrics({ config, ledger: l, history: h });
    unsubscribe = qg.subscribe(metrics.guardEvent);
    // The reconcile writes outside spend: only a serve that opened the store for writing runs it.
    if (reconciles(config) && opts.decisions === true)
      reconcile = reconcileSchedule(qg, h, {}, (r) => metrics.reconcile.reconciled(r));
    else if (reconciles(config))
      logger.info(
        {},
        'not reconciling: serve without --decisions only reads the ledger (run, serve --decisions or quota-guard reconcile from cron does)',
      );
    const routes = api?.decisionApiFor({
      guard,
      history: h,
      host: listener.host,
      ...(tokens !== undefined ? { tokens } : {}),
      ...(callers ? { callers } : {}),
      logger,
      onRequest: metrics.apiRequest,
      labelsOf: trendingLabels,
    });
    listener.serve({
      ...(routes ? { routes } : {}),
      metrics,
      ledger: l,
      writes: routes !== undefined,
      page: async () =>
        renderStatusPage(
          await statusPageData(config, l, h, {
            refreshSeconds: opts.refresh,
            pacing: (credential, bucket) => guard.pacingLine(credential, bucket),
          }),
        ),
    });
    const url = listener.url;
    if (!isLoopback(listener.host))
      logger.warn({ host: listener.host }, 'serving the status page beyond loopback');
    logger.info(
      { url, ...(listener.inherited ? { socket: 'inherited' } : {}) },
      routes
        ? `serving the decision API at ${url}/v1/, ${url}/metrics, ${url}/healthz and the status page at ${url}/`
        : `serving ${url}/metrics, ${url}/healthz and the status page at ${url}/ (reading the ledger only)`,
    );
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
  } finally {
    dispose();
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    try {
      await reconcile?.stop();
      await listener.close();
    } finally {
      unsubscribe?.();
      // Spends the decision API made whose answer never came get one command timeout to be
      // settled; then the history and the ledger close.
      await ctx?.close();
    }
    // The last line of a serve: a log that ends without it ended with the process killed.
    if (ctx)
      logger.info({ url: listener.url, by: stoppedBy }, `stopped serving ${listener.url} (${stoppedBy})`);
  }
  return 0;
}
