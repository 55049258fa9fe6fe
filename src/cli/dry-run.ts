/**
 * The `--dry-run` of the job commands: open the ledger only to read it, print what the run would
 * spend against what may be spent now, and exit 0 when it fits, 75 when the budget would stop it.
 */

import { ExitCode } from '../errors.js';
import type { YouTubeConfig } from '../youtube/config/types.js';
import { type DryRunJob, dryRun, renderDryRun } from '../youtube/job-library/dry-run.js';
import { withContext } from './context.js';

export async function dryRunCommand(
  config: YouTubeConfig,
  jobs: readonly DryRunJob[],
  json: boolean,
): Promise<number> {
  // Read only: a ledger that does not exist yet is reported (exit 66), not created.
  const report = await withContext({}, ({ ledger }) => dryRun(config, ledger, jobs), {
    config,
    readOnly: true,
  });
  process.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : renderDryRun(report));
  return report.fits ? ExitCode.OK : ExitCode.TEMPFAIL;
}
