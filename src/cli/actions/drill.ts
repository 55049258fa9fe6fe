/** `quota-guard drill`: the action (its options are declared in src/cli/commands/drill.ts). */

import { writeFileSync } from 'node:fs';
import { runDrill } from '../../drill/drill.js';
import { drillSvg } from '../../drill/svg.js';
import { ExitCode } from '../../errors.js';
import type { DrillCommandOptions } from '../command-options.js';
import { profileFor } from '../profile.js';
import { renderDrill } from '../render/drill.js';

export async function run(opts: DrillCommandOptions): Promise<number | undefined> {
  const profile = await profileFor(opts.profile, opts.config);
  const progress = opts.json ? undefined : (line: string) => process.stderr.write(`drill: ${line}\n`);
  const report = await runDrill({
    daySeconds: opts.daySeconds,
    profile,
    quota: opts.quota,
    behindAt: opts.behindAt,
    ...(opts.store !== undefined ? { store: opts.store } : {}),
    ...(opts.keyPrefix !== undefined ? { keyPrefix: opts.keyPrefix } : {}),
    ...(opts.mixed ? { mixed: true } : {}),
    ...(opts.keep ? { keep: true } : {}),
    ...(opts.reconcile ? { reconcile: true } : {}),
    ...(progress ? { onProgress: progress } : {}),
  });
  if (opts.svg !== undefined) {
    writeFileSync(opts.svg, drillSvg(report));
  }
  process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : renderDrill(report));
  return report.ok ? ExitCode.OK : ExitCode.SOFTWARE;
}
