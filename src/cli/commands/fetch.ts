/**
 * `quota-guard fetch [--region R …] [--credential ID] [--json]`: fetch the trending charts now, every
 * configured region at once (or the ones named), each page spent through the guard and written to
 * the cache. Exit 0 done, 75 stopped by the budget (run again later), 69 store or upstream
 * unavailable, 78 configuration error.
 */
import type { Command } from 'commander';
import { terminalJson } from '../../terminal-text.js';
import { action } from '../action.js';
import { collect, configOption, type JobCommandOptions } from '../options.js';

interface FetchOptions extends JobCommandOptions {
  region: string[];
  dryRun?: boolean;
}

export function register(program: Command): void {
  configOption(
    program
      .command('fetch')
      .description(
        'fetch trending charts now (every configured region at once, or --region), spending through the guard',
      )
      .option(
        '-r, --region <code>',
        'a region to fetch (repeat for several; default: all configured)',
        collect,
        [],
      )
      .option('--credential <id>', 'the credential to spend (default: the first in the config)')
      .option(
        '--dry-run',
        'show what the run would spend against the ledger now, without fetching or recording',
      )
      .option('--json', 'print the results as JSON'),
  ).action(
    action(async (opts: FetchOptions) => {
      const [
        { preflight, withJobs },
        { combinedExitCode, runSideBySide },
        { jobJson, jobLine, totals },
        { runTrending },
        { count },
      ] = await Promise.all([
        import('../job-commands.js'),
        import('../../runs/job-run.js'),
        import('../../job-library/summary.js'),
        import('../../job-library/trending.js'),
        import('../render/format.js'),
      ]);
      const {
        config,
        credential,
        checked: regions,
      } = await preflight(opts, (c) =>
        opts.region.length ? [...new Set(opts.region.map((r) => c.region(r)))] : c.regions,
      );
      if (opts.dryRun) {
        const [{ dryRunCommand }, { trendingDryRun }] = await Promise.all([
          import('../dry-run.js'),
          import('../../job-library/dry-run.js'),
        ]);
        return dryRunCommand(
          config,
          regions.map((region) => trendingDryRun(config, credential, region)),
          opts.json === true,
        );
      }
      return withJobs(config, async (jobs, signal) => {
        const results = await runSideBySide(
          regions.map((region) => runTrending(jobs, { region, credential, signal })),
        );
        if (opts.json) {
          process.stdout.write(`${terminalJson(results.map(jobJson), 2)}\n`);
        } else {
          const t = totals(results);
          process.stdout.write(
            `${results.map(jobLine).join('\n')}\n` +
              `total: ${count(t.pages, 'page')}, ${count(t.videos, 'video')}, ${count(t.units, 'unit')} of ${credential}\n`,
          );
        }
        return combinedExitCode(results);
      });
    }),
  );
}
