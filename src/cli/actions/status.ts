/**
 * `quota-guard status`: what it shows, gathered (the ledger's report, where the stores are, every
 * region's last successful fetch from the run history) and printed. The command's action module,
 * imported when status runs, so the bundle reads the pieces status alone uses as one chunk, Luxon
 * and node-cron included.
 */

import * as luxon from 'luxon';
import * as nodeCron from 'node-cron';
import { redactStoreUrl } from '../../config/store-url.js';
import { quotaStatus } from '../../guard/status.js';
import type { GuardLogger } from '../../guard/types.js';
import { openRunHistory } from '../../history/index.js';
import type { Ledger } from '../../ledger/types.js';
import { recordedLateNotices } from '../../metrics/late-notice.js';
import { reconcileNotices, reconcileView } from '../../metrics/reconcile-view.js';
import { terminalJson } from '../../terminal-text.js';
import { provideTimeLibs } from '../../time-libs.js';
import type { YouTubeConfig } from '../../youtube/config/types.js';
import { scheduledNeed } from '../../youtube/cron-runs.js';
import { regionFreshness } from '../../youtube/freshness.js';
import { youtubeConfigured } from '../../youtube/trending-spend.js';
import type { StatusOptions } from '../command-options.js';
import { loadCliConfig } from '../config.js';
import { withContext } from '../context.js';
import { outputWidth } from '../render/format.js';
import { renderStatus, type StatusView, statusSummary } from '../render/status.js';

// Status always does calendar and cron arithmetic (the upstream day, the scheduled runs left in
// it): imported with this module, which the bundle then carries, rather than required on first use.
provideTimeLibs({ luxon, nodeCron });

/** The report `status` prints or writes as JSON (`credential`: only that one). */
export async function statusView(
  config: YouTubeConfig,
  ledger: Ledger,
  logger: GuardLogger,
  credential: string | undefined,
): Promise<StatusView> {
  const report: StatusView = {
    ...(await quotaStatus(config, ledger, {
      scheduledNeed: scheduledNeed(config),
      ...(credential !== undefined ? { credential } : {}),
    })),
    ...storeLocations(config),
  };
  // Region freshness is the application's: a config for another API has no regions to show. The
  // reconciles are any config's that names a project.
  const app = youtubeConfigured(config);
  const reconciled = config.credentials.some((c) => c.project !== undefined);
  if (app || reconciled) {
    const history = await openRunHistory(config.store);
    try {
      if (app) report.freshness = await regionFreshness(config, history, Date.parse(report.at));
      const reconcile = await reconcileView(config, history);
      if (reconcile) {
        report.reconcile = reconcile;
        report.notices = [...(report.notices ?? []), ...reconcileNotices(reconcile, Date.parse(report.at))];
      }
    } catch (e) {
      logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'run history unreadable');
    } finally {
      await history.close();
    }
  }
  const late = recordedLateNotices(report);
  if (late.length > 0) report.notices = [...(report.notices ?? []), ...late];
  report.summary = statusSummary(report);
  return report;
}

/**
 * Where the ledger and (where the application runs) the cache are, as an operator should see
 * them: absolute, no password.
 */
function storeLocations(config: YouTubeConfig): { ledger: string; cache?: string } {
  const url = config.store.url;
  return {
    ledger: url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : redactStoreUrl(url),
    ...(youtubeConfigured(config) ? { cache: config.cache.path } : {}),
  };
}

export async function run(opts: StatusOptions): Promise<number> {
  // A mistyped --credential is said first (78), before the ledger is looked for.
  const config = await loadCliConfig(opts.config);
  if (opts.credential !== undefined) config.credential(opts.credential);
  const view = await withContext(
    opts,
    ({ ledger, logger }) => statusView(config, ledger, logger, opts.credential),
    { readOnly: true, config },
  );
  process.stdout.write(
    opts.json
      ? `${terminalJson(view, 2)}\n`
      : renderStatus(view, { tty: process.stdout.isTTY === true, width: outputWidth() }),
  );
  return 0;
}
