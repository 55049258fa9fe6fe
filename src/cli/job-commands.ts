/**
 * What the job commands (fetch, backfill, run) share: the checks before anything opens, and the
 * jobs' context around a run. Loaded by their actions, not at start.
 */

import { abortOnSignals } from '../runs/job-run.js';
import type { YouTubeConfig } from '../youtube/config/types.js';
import { type OpenedJobContext, openJobContext } from '../youtube/job-library/context.js';
import { loadCliConfig } from './config.js';
import { withContext } from './context.js';
import type { JobCommandOptions } from './options.js';

/**
 * Everything a job command checks before it opens a store: the config, the credential, and its
 * API key variable (so a mistake is one line and exit 78, with nothing opened or written).
 */
export async function preflight<T>(
  opts: JobCommandOptions,
  check: (config: YouTubeConfig) => T,
): Promise<{ config: YouTubeConfig; credential: string; checked: T }> {
  const config = await loadCliConfig(opts.config);
  const credential = config.credential(opts.credential ?? config.credentials[0]?.id ?? 'default').id;
  const checked = check(config);
  config.apiKey(credential);
  return { config, credential, checked };
}

/**
 * Open the command's context and the jobs' (cache, upstream clients), run `fn` with an AbortSignal
 * tied to SIGINT/SIGTERM, and close everything however it ends. An unreachable Redis is the
 * store-down policy's business (cheap calls fail open), not an error at open.
 */
export function withJobs(
  config: YouTubeConfig,
  fn: (jobs: OpenedJobContext, signal: AbortSignal) => Promise<number>,
): Promise<number> {
  return withContext(
    {},
    async (ctx) => {
      // The jobs record their runs in the handle's run history, which closes with it.
      const jobs = openJobContext(ctx.qg);
      const { signal, dispose } = abortOnSignals();
      try {
        return await fn(jobs, signal);
      } finally {
        dispose();
        await jobs.close();
      }
    },
    { allowUnreachable: true, config, history: true },
  );
}
