/** `quota-guard demo`: the action (its options are declared in src/cli/commands/demo.ts). */

import { abortOnSignals } from '../../runs/job-run.js';
import { runDemo } from '../demo.js';

export async function run(opts: { dir?: string; config?: string }): Promise<number | undefined> {
  const { signal, dispose } = abortOnSignals();
  try {
    const report = await runDemo({
      ...(opts.dir !== undefined ? { dir: opts.dir } : {}),
      ...(opts.config !== undefined ? { config: opts.config } : {}),
      signal,
    });
    return report.exitCode;
  } finally {
    dispose();
  }
}
