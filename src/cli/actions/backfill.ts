/** `quota-guard backfill`: the action (its options are declared in src/cli/commands/backfill.ts). */

import { terminalJson } from '../../terminal-text.js';
import { openCache } from '../../youtube/cache/index.js';
import {
  BACKFILL_BATCH,
  backfillDue,
  backfillMethod,
  runBackfill,
} from '../../youtube/job-library/backfill.js';
import { backfillProgress } from '../../youtube/job-library/progress.js';
import { jobJson, jobLine } from '../../youtube/job-library/summary.js';
import type { BackfillCommandOptions } from '../command-options.js';
import { cliLogOutput } from '../context.js';
import { dryRunCommand } from '../dry-run.js';
import { preflight, withJobs } from '../job-commands.js';

export async function run(opts: BackfillCommandOptions): Promise<number | undefined> {
  const { config, credential } = await preflight(opts, () => undefined);
  if (opts.dryRun) {
    const cache = openCache(config.cache.path, { create: false });
    let due: number;
    try {
      due = backfillDue(cache, credential, config.backfill.minAgeMs);
    } finally {
      cache.close();
    }
    const method = backfillMethod(config.credential(credential));
    const batches = Math.ceil(due / BACKFILL_BATCH);
    const cost = config.credential(credential).methods[method]?.cost ?? 1;
    const calls = opts.maxUnits !== undefined ? Math.min(batches, Math.floor(opts.maxUnits / cost)) : batches;
    return dryRunCommand(
      config,
      [
        {
          job: 'backfill',
          credential,
          method,
          tier: 'backfill',
          calls,
          what: `${due.toLocaleString('en-US')} videos due, ${calls.toLocaleString('en-US')} batch${calls === 1 ? '' : 'es'} of up to ${BACKFILL_BATCH}${calls < batches ? ` (--max-units ${opts.maxUnits})` : ''}`,
        },
      ],
      opts.json === true,
    );
  }
  return withJobs(config, async (jobs, signal) => {
    const result = await runBackfill(jobs, {
      credential,
      signal,
      progress: backfillProgress({ logger: jobs.logger, logs: cliLogOutput }),
      ...(opts.maxUnits !== undefined ? { maxUnits: opts.maxUnits } : {}),
    });
    process.stdout.write(opts.json ? `${terminalJson(jobJson(result), 2)}\n` : `${jobLine(result)}\n`);
    return result.exitCode;
  });
}
