/** `quota-guard migrate`: the action (its options are declared in src/cli/commands/migrate.ts). */

import { parseStoreUrl, redactStoreUrl } from '../../config/store-url.js';
import type { Config } from '../../config/types.js';
import { LEDGER_FORMAT } from '../../ledger/sqlite.js';
import {
  FORMAT_KEY,
  markRedisFormat,
  openRedisConnection,
  REDIS_FORMAT,
  readRedisFormat,
} from '../../redis/index.js';
import { type MigrationReport, migrateStore } from '../../sqlite/index.js';
import { terminalJson } from '../../terminal-text.js';
import { openCache } from '../../youtube/cache/cache.js';
import { CACHE_FORMAT } from '../../youtube/cache/schema.js';
import type { MigrateOptions } from '../command-options.js';
import { loadCliConfig } from '../config.js';
import { renderMigration, type StoreMigration } from '../render/migrate.js';

export async function run(opts: MigrateOptions): Promise<number> {
  const config = await loadCliConfig(opts.config);
  const dryRun = opts.dryRun === true;
  const stores = [await migrateLedger(config, dryRun), migrateCache(config.cache.path, dryRun)];
  process.stdout.write(
    opts.json ? `${terminalJson({ dryRun, stores }, 2)}\n` : renderMigration(stores, dryRun),
  );
  return 0;
}

function fromSqlite(store: StoreMigration['store'], r: MigrationReport): StoreMigration {
  return {
    store,
    kind: 'sqlite',
    where: r.path,
    format: 'schema version',
    from: r.from ?? null,
    to: r.to,
    steps: r.steps,
  };
}

async function migrateLedger(config: Config, dryRun: boolean): Promise<StoreMigration> {
  const s = config.store;
  const url = parseStoreUrl(s.url);
  if (url.kind === 'sqlite')
    return fromSqlite('ledger', migrateStore(LEDGER_FORMAT, { path: url.path, dryRun }));
  const prefix = s.keyPrefix ?? '';
  const conn = await openRedisConnection(url.kind, url.url, {
    ...(s.commandTimeoutMs !== undefined ? { commandTimeoutMs: s.commandTimeoutMs } : {}),
    ...(s.connectTimeoutMs !== undefined ? { connectTimeoutMs: s.connectTimeoutMs } : {}),
  });
  try {
    const format = await readRedisFormat(conn, prefix);
    // The one step there is: marking a store 0.2.0 wrote (its layout is this release's).
    const steps = format.marked
      ? []
      : [
          {
            from: format.version,
            change: `mark the store with its format (key '${prefix}${FORMAT_KEY}' = ${REDIS_FORMAT}); no other key changes`,
            previousReads: true,
          },
        ];
    if (!dryRun && !format.marked) await markRedisFormat(conn, prefix);
    return {
      store: 'ledger',
      kind: url.kind,
      where: `${redactStoreUrl(s.url)}${prefix ? ` (key prefix '${prefix}')` : ''}`,
      format: 'format',
      from: format.version,
      to: REDIS_FORMAT,
      steps,
    };
  } finally {
    await conn.close();
  }
}

/**
 * The cache's schema, then its search index: a command that writes catches the index up as it
 * opens the file (rows stored and not yet indexed, an index made by other word rules), which a
 * command that only reads never does.
 */
function migrateCache(path: string, dryRun: boolean): StoreMigration {
  const report = migrateStore(CACHE_FORMAT, { path, dryRun });
  if (!dryRun && report.from !== undefined) openCache(path).close();
  return fromSqlite('cache', report);
}
