/**
 * `quota-guard backfill [--max-units N] [--credential ID] [--json]`: refresh cached videos, oldest
 * refresh first, under the backfill tier; resumes where the last run stopped. A progress bar on a
 * terminal, periodic log lines otherwise. Exit 0 done (or --max-units spent), 75 stopped at the
 * headroom line or by the budget, 69 store or upstream unavailable, 78 configuration error.
 */
import type { Command } from 'commander';
import { terminalJson } from '../../terminal-text.js';
import { action } from '../action.js';
import { configOption, type JobCommandOptions, parsePositiveInt } from '../options.js';

interface BackfillCommandOptions extends JobCommandOptions {
  maxUnits?: number;
  dryRun?: boolean;
}

export function register(program: Command): void {
  configOption(
    program
      .command('backfill')
      .description(
        'refresh cached videos (oldest first) under the backfill tier; resumes where the last run stopped',
      )
      .option('--max-units <n>', 'spend at most this many units in this run', parsePositiveInt)
      .option('--credential <id>', 'the credential to spend (default: the first in the config)')
      .option(
        '--dry-run',
        'show what the run would spend against the ledger now, without calling the upstream or recording',
      )
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
        import('../job-commands.js'),
        import('../context.js'),
        import('../../job-library/backfill.js'),
        import('../../job-library/progress.js'),
        import('../../job-library/summary.js'),
      ]);
      const { config, credential } = await preflight(opts, () => undefined);
      if (opts.dryRun) {
        const [{ dryRunCommand }, { openCache }, { BACKFILL_BATCH, backfillDue, backfillMethod }] =
          await Promise.all([
            import('../dry-run.js'),
            import('../../cache/index.js'),
            import('../../job-library/backfill.js'),
          ]);
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
        const calls =
          opts.maxUnits !== undefined ? Math.min(batches, Math.floor(opts.maxUnits / cost)) : batches;
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
    }),
  );
}
