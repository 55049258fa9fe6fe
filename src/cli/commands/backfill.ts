/**
 * `quota-guard backfill [--max-units N] [--credential ID] [--json]`: refresh cached videos, oldest
 * refresh first, under the backfill tier; resumes where the last run stopped. A progress bar on a
 * terminal, periodic log lines otherwise. Exit 0 done (or --max-units spent), 75 stopped at the
 * headroom line or by the budget, 69 store or upstream unavailable, 78 configuration error.
 */
import type { Command } from 'commander';
import { configOption, type JobCommandOptions, positiveInt } from '../options.js';
import { action } from '../run.js';

interface BackfillCommandOptions extends JobCommandOptions {
  maxUnits?: number;
}

export function register(program: Command): void {
  configOption(
    program
      .command('backfill')
      .description(
        'refresh cached videos (oldest first) under the backfill tier; resumes where the last run stopped',
      )
      .option('--max-units <n>', 'spend at most this many units in this run', positiveInt)
      .option('--credential <id>', 'the credential to spend (default: the first in the config)')
      .option('--json', 'print the result as JSON'),
  ).action(
    action(async (opts: BackfillCommandOptions) => {
      const [
        { preflight, withJobs },
        { cliLogOutput },
        { runBackfill },
        { backfillProgress },
        { jobJson, jobLine },
      ] = await Promise.all([
        import('../jobs.js'),
        import('../context.js'),
        import('../../jobs/backfill.js'),
        import('../../jobs/progress.js'),
        import('../../jobs/summary.js'),
      ]);
      const { config, credential } = preflight(opts, () => undefined);
      return withJobs(config, async (jobs, signal) => {
        const result = await runBackfill(jobs, {
          credential,
          signal,
          progress: backfillProgress({ logger: jobs.logger, logs: cliLogOutput }),
          ...(opts.maxUnits !== undefined ? { maxUnits: opts.maxUnits } : {}),
        });
        process.stdout.write(
          opts.json ? `${JSON.stringify(jobJson(result), null, 2)}\n` : `${jobLine(result)}\n`,
        );
        return result.exitCode;
      });
    }),
  );
}
