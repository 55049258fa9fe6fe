/** What `quota-guard migrate` prints: per store, its format and each step with what it changes. */

/** One store's migration, as `--json` prints it. */
export interface StoreMigration {
  store: 'ledger' | 'cache';
  kind: 'sqlite' | 'redis' | 'redis-cluster';
  /** The file (absolute), or the Redis address without its password, and the key prefix. */
  where: string;
  /** What the numbers count: `schema version` (SQLite's user_version) or `format` (Redis). */
  format: string;
  /** The store's version before; null when there is no store yet (nothing to do). */
  from: number | null;
  to: number;
  steps: Array<{ from: number; change: string; previousReads: boolean }>;
}

export function renderMigration(stores: readonly StoreMigration[], dryRun: boolean): string {
  const lines: string[] = [];
  for (const s of stores) {
    const head = `${s.store} ${s.where}:`;
    if (s.from === null) {
      lines.push(
        `${head} none yet (the first command that writes creates it at ${s.format} ${s.to}): nothing to do`,
      );
      continue;
    }
    if (s.steps.length === 0) {
      lines.push(`${head} ${s.format} ${s.from}, current: nothing to do`);
      continue;
    }
    const moves = s.from === s.to ? `${s.format} ${s.to}` : `${s.format} ${s.from} to ${s.to}`;
    lines.push(
      `${head} ${dryRun ? 'would take' : 'took'} ${s.steps.length} step${s.steps.length === 1 ? '' : 's'} (${moves})`,
    );
    for (const step of s.steps) {
      const reads = step.previousReads
        ? 'the previous release reads the result'
        : 'the previous release cannot read the result: stop it on every host first';
      lines.push(`  ${step.from}: ${step.change} (${reads})`);
    }
  }
  if (dryRun) lines.push('dry run: nothing was changed');
  return `${lines.join('\n')}\n`;
}
