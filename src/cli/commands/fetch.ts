/**
 * `quota-guard fetch [--region R …] [--credential ID] [--json]`: fetch the trending charts now, every
 * configured region at once (or the ones named), each page spent through the guard and written to
 * the cache. Exit 0 done, 75 stopped by the budget (run again later), 69 store or upstream
 * unavailable, 78 configuration error.
 */
import type { Command } from 'commander';
import { loadConfig } from '../../config/load.js';
import type { Config } from '../../config/types.js';
import { openRunHistory } from '../../history/index.js';
import { type OpenedJobContext, openJobContext } from '../../jobs/context.js';
import { abortOnSignals, combinedExitCode, runSideBySide } from '../../jobs/run.js';
import { jobJson, jobLine, totals } from '../../jobs/summary.js';
import { runTrending } from '../../jobs/trending.js';
import { type ConfigOptions, configOption, withContext } from '../context.js';
import { action } from '../run.js';

export interface JobCommandOptions extends ConfigOptions {
  credential?: string;
  json?: boolean;
}

interface FetchOptions extends JobCommandOptions {
  region: string[];
}

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * Everything a job command checks before it opens a store: the config, the credential, and its
 * API key variable (so a mistake is one line and exit 78, with nothing opened or written).
 */
export function preflight<T>(
  opts: JobCommandOptions,
  check: (config: Config) => T,
): { config: Config; credential: string; checked: T } {
  const config = loadConfig(opts.config !== undefined ? { file: opts.config } : {});
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
  config: Config,
  fn: (jobs: OpenedJobContext, signal: AbortSignal) => Promise<number>,
): Promise<number> {
  return withContext(
    {},
    async (ctx) => {
      const jobs = openJobContext(ctx, { history: await openRunHistory(config.store) });
      const { signal, dispose } = abortOnSignals();
      try {
        return await fn(jobs, signal);
      } finally {
        dispose();
        await jobs.close();
      }
    },
    { allowUnreachable: true, config },
  );
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
      .option('--json', 'print the results as JSON'),
  ).action(
    action(async (opts: FetchOptions) => {
      const {
        config,
        credential,
        checked: regions,
      } = preflight(opts, (c) =>
        opts.region.length ? [...new Set(opts.region.map((r) => c.region(r)))] : c.regions,
      );
      return withJobs(config, async (jobs, signal) => {
        const results = await runSideBySide(
          regions.map((region) => runTrending(jobs, { region, credential, signal })),
        );
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(results.map(jobJson), null, 2)}\n`);
        } else {
          const t = totals(results);
          process.stdout.write(
            `${results.map(jobLine).join('\n')}\n` +
              `total: ${t.pages} pages, ${t.videos} videos, ${t.units} units of ${credential}\n`,
          );
        }
        return combinedExitCode(results);
      });
    }),
  );
}
