/**
 * The job API's public types. A job run returns a `JobResult` value whatever happens to it (done,
 * stopped by the budget, aborted, store or upstream unavailable, misconfigured); only bugs throw.
 * The CLI maps `exitCode` to the process exit code; the scheduler and drills read the rest.
 */

import type { Guard } from '../../guard/guard.js';
import type { GuardLogger } from '../../guard/types.js';
import type { RunHistory } from '../../history/types.js';
import type { JobOutcome, JobResult, JobRunOptions, RunContext } from '../../runs/types.js';
import type { Cache } from '../cache/index.js';
import type { YouTubeConfig } from '../config/types.js';
import type { YouTubeClient } from '../upstream/client.js';

export type { JobOutcome, JobResult, JobRunOptions, RunContext };

/** Where a job's upstream clients come from: one per credential (its API key is read on first use). */
export interface UpstreamClients {
  /** The client for a credential. Throws ConfigError (QG_MISSING_API_KEY) when its key variable is unset. */
  get(credentialId: string): YouTubeClient;
  close(): Promise<void>;
}

/** The shared pieces every job run uses; one set can serve many concurrent runs in one process. */
export interface JobContext {
  config: YouTubeConfig;
  guard: Guard;
  cache: Cache;
  upstream: UpstreamClients;
  /** One structured line per page, and the end of each run (pino in the CLI, to stderr). */
  logger: GuardLogger;
  /** The clock (default `Date.now`). */
  now?: () => number;
  /** Where each finished run is summarised for `history`, `status` and the status page (the ledger's store). */
  history?: RunHistory;
}
