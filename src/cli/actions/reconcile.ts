/** `quota-guard reconcile`: the action (its options are declared in src/cli/commands/reconcile.ts). */
import { ConfigError, exitCodeFor } from '../../errors.js';
import { googleAuthTokens } from '../../reconcile/google-auth.js';
import { cloudMonitoringSource } from '../../reconcile/google-monitoring.js';
import { createReconciler, projectsOf } from '../../reconcile/reconciler.js';
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
  const { keyFile, monitoring } = config.reconcile;
  const tokens = googleAuthTokens({
    projectId: projects[0]!,
    ...(keyFile !== undefined ? { keyFile } : {}),
  });
  // Credentials that give no token are said before the ledger opens (the library keeps the token).
  await tokens.token();
  const source = cloudMonitoringSource({
    tokens,
    baseUrl: monitoring.baseUrl,
    deadlineMs: monitoring.deadlineMs,
    maxResponseBytes: monitoring.maxResponseBytes,
    settings: {
      deadline: 'reconcile.monitoring.deadline',
      maxResponseBytes: 'reconcile.monitoring.maxResponseBytes',
    },
  });
  try {
    return await withContext(
      opts,
      async ({ ledger }) => {
        const result = await createReconciler({ config, ledger, source }).reconcileOnce();
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
      { config },
    );
  } finally {
    await source.close();
  }
}
