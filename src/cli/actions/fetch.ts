/** `quota-guard fetch`: the action (its options are declared in src/cli/commands/fetch.ts). */

import { combinedExitCode, runSideBySide } from '../../runs/job-run.js';
import { terminalJson } from '../../terminal-text.js';
import { trendingDryRun } from '../../youtube/job-library/dry-run.js';
import { jobJson } from '../../youtube/job-library/summary.js';
import { runTrending } from '../../youtube/job-library/trending.js';
import type { FetchOptions } from '../command-options.js';
import { dryRunCommand } from '../dry-run.js';
import { preflight, withJobs } from '../job-commands.js';
import { renderFetch } from '../render/fetch.js';

export async function run(opts: FetchOptions): Promise<number | undefined> {
  const {
    config,
    credential,
    checked: regions,
  } = await preflight(opts, (c) =>
    opts.region.length ? [...new Set(opts.region.map((r) => c.region(r)))] : c.regions,
  );
  if (opts.dryRun) {
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
    process.stdout.write(
      opts.json ? `${terminalJson(results.map(jobJson), 2)}\n` : renderFetch(results, credential),
    );
    return combinedExitCode(results);
  });
}
