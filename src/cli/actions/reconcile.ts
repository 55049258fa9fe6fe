/** `quota-guard reconcile`: the action (its options are declared in src/cli/commands/reconcile.ts). */
import { ConfigError, exitCodeFor } from '../../errors.js';
import { createReconciler, projectsOf } from '../../reconcile/reconciler.js';
import { reconcileRuns } from '../../reconcile/runs.js';
import { monitoringSourceFor, reconcileTokens } from '../../reconcile/setup.js';
import { terminalJson, terminalText } from '../../terminal-text.js';
import type { ReconcileOptions } from '../command-options.js';
import { loadCliConfig } from '../config.js';
import { withContext } from '../context.js';
import { reconcileJson, renderReconcile } from '../render/reconcile.js';

export async function run(opts: ReconcileOptions): Promise<number> {
  const config = await loadCliConfig(opts.config);
  const projects = [...projectsOf(config.credentials).keys()];
  if (projects.length === 0) {
    throw new ConfigError([
      'credentials[].project: no credential names its Google Cloud project, so there is no count to reconcile with (docs/operations.md, "Reconcile with the upstream\'s count")',
    ]);
  }
  const tokens = reconcileTokens(config, projects[0]!);
  // Credentials that give no token are said before the ledger opens (the library keeps the token).
  await tokens.token();
  const source = monitoringSourceFor(config, tokens);
  try {
    return await withContext(
      opts,
      async ({ ledger, qg, logger }) => {
        const startedAt = Date.now();
        const result = await createReconciler({ config, ledger, source }).reconcileOnce();
        // Recorded as `run` and `serve` record theirs: status and the page read the last one.
        for (const r of reconcileRuns(result, startedAt, Date.now())) {
          await qg.history?.record(r).catch((e: unknown) => {
            logger.warn(
              { job: r.job, err: e instanceof Error ? e.message : String(e) },
              'the run history did not take the reconcile',
            );
          });
        }
        if (opts.json)
          process.stdout.write(`${terminalJson(reconcileJson(result, config.reconcile.lagMs))}\n`);
        else process.stdout.write(renderReconcile(result, config.reconcile.lagMs));
        for (const p of result.projects) {
          if (!p.ok)
            process.stderr.write(
              `quota-guard: reconcile: ${terminalText(p.error.message)} (${p.error.code})\n`,
            );
        }
        const failed = result.projects.find((p) => !p.ok);
        return failed === undefined || failed.ok ? 0 : exitCodeFor({ code: failed.error.code });
      },
      { config, history: true },
    );
  } finally {
    await source.close();
  }
}
