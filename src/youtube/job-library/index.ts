export {
  abortOnSignals,
  combinedExitCode,
  endFromError,
  endFromStop,
  type JobEnd,
  JobRun,
  runSideBySide,
} from '../../runs/job-run.js';
export {
  BACKFILL_BATCH,
  type BackfillMethod,
  type BackfillOptions,
  type BackfillProgress,
  backfillCursorName,
  backfillMethod,
  runBackfill,
  statsToVideo,
} from './backfill.js';
export { type OpenedJobContext, type OpenJobContextOptions, openJobContext } from './context.js';
export { backfillProgress, type ProgressOptions } from './progress.js';
export { jobJson, jobLine, totals } from './summary.js';
export {
  PAGE_SIZE,
  runTrending,
  TRENDING_METHOD,
  type TrendingOptions,
} from './trending.js';
export type * from './types.js';
export { type UpstreamClientsOptions, upstreamClients } from './upstream.js';
