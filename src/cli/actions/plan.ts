/** `quota-guard plan`: read the config, plan every schedule against every limit, print it. */
import { ExitCode } from '../../errors.js';
import { planBudget } from '../../youtube/plan/plan.js';
import type { PlanOptions } from '../command-options.js';
import { loadCliConfig } from '../config.js';
import { outputWidth } from '../render/format.js';
import { renderPlan } from '../render/plan.js';

export async function run(opts: PlanOptions): Promise<number> {
  const config = await loadCliConfig(opts.config);
  const report = planBudget(config);
  process.stdout.write(
    opts.json ? `${JSON.stringify(report, null, 2)}\n` : renderPlan(report, config.source, outputWidth()),
  );
  return report.fits ? ExitCode.OK : ExitCode.DATAERR;
}
