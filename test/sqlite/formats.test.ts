/**
 * Two releases side by side on one SQLite file: a command that only reads changes nothing (no
 * migration, no table, not a byte of the file), reads an older version it can read as it is and
 * says `quota-guard migrate` for one it cannot; a command that writes takes the steps the previous
 * release can read and leaves the others to `quota-guard migrate`, which says what each changes.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openLedger } from '../../src/index.js';
import { LEDGER_FORMAT } from '../../src/ledger/sqlite.js';
import { migrateStore, openStore, type StoreFormat } from '../../src/sqlite/index.js';
import { CACHE_FORMAT } from '../../src/youtube/cache/schema.js';
import { cli, configFile, dir, expectOneLine, quietCli } from '../cli/helpers.js';

quietCli();

let n = 0;
const HOUR = 3_600_000;

/** A ledger file as an older release left it: its first `version` steps and one spend, closed. */
function olderLedger(version: number): string {
  const file = join(dir, `formats-${n++}.db`);
  const { db } = openStore(
    { ...LEDGER_FORMAT, migrations: LEDGER_FORMAT.migrations.slice(0, version) },
    { path: file },
  );
  const now = Date.now();
  db.prepare(
    'INSERT INTO qg_budget (key, window_ms, total, oldest_at, expires_at) VALUES (?, ?, ?, ?, ?)',
  ).run('qg:{main}:units', 24 * HOUR, 7, now - 1000, now + 24 * HOUR);
  db.prepare('INSERT INTO qg_entry (key, at, id, cost, tag) VALUES (?, ?, ?, ?, ?)').run(
    'qg:{main}:units',
    now - 1000,
    'abc:7:old',
    7,
    'old',
  );
  db.close();
  return file;
}

/** The file's bytes, to show that nothing was written. */
const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

function schemaOf(file: string): { version: number; tables: string[]; columns: string[] } {
  const db = new Database(file, { readonly: true });
  try {
    return {
      version: db.pragma('user_version', { simple: true }) as number,
      tables: db
        .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
        .pluck()
        .all() as string[],
      columns: db.prepare(`SELECT name FROM pragma_table_info('qg_run')`).pluck().all() as string[],
    };
  } finally {
    db.close();
  }
}

const configFor = (file: string) =>
  configFile(`store: "sqlite:${file}"\ncredentials:\n  - id: main\n    apiKeyEnv: QG_FORMATS_KEY\n`);

describe('a command that only reads', () => {
  it('reads a version-3 ledger as it is and changes not a byte of it', async () => {
    const file = olderLedger(3);
    const before = digest(file);
    const config = configFor(file);
    const status = await cli('status', '--json', '--config', config);
    expect(status.code).toBe(0);
    expect(
      (JSON.parse(status.stdout) as { credentials: Array<{ buckets: Array<{ used: number }> }> })
        .credentials[0]!.buckets[0]!.used,
    ).toBe(7);
    expect((await cli('history', '--json', '--config', config)).code).toBe(0);
    expect(digest(file)).toBe(before);
    expect(schemaOf(file).version).toBe(3);
    // The ledger read through the library the same way: create: false is "only reads".
    const ledger = await openLedger(`sqlite:${file}`, { create: false });
    expect((await ledger.peek({ key: 'qg:{main}:units', windowMs: 24 * HOUR })).used).toBe(7);
    await ledger.close();
    expect(digest(file)).toBe(before);
  });

  it('says `quota-guard migrate` in one line for a version it cannot read as it is, and changes nothing', async () => {
    const file = olderLedger(2);
    const before = digest(file);
    const r = await cli('status', '--config', configFor(file));
    expect(r.code).toBe(78);
    expectOneLine(
      r.stderr,
      /SQLite ledger '.*' is of schema version 2, .*run `quota-guard migrate`.*\(QG_STORE_OUTDATED\)$/,
    );
    expect(digest(file)).toBe(before);
  });
});

describe('a command that writes', () => {
  it('takes the steps the previous release reads by itself', async () => {
    const file = olderLedger(2);
    const r = await cli('spend', 'main', '--cost', '3', '--config', configFor(file));
    expect(r.code).toBe(0);
    expect(schemaOf(file).version).toBe(LEDGER_FORMAT.migrations.length);
  });

  it('leaves a step the previous release could not read to `quota-guard migrate`', async () => {
    // A format one step ahead of this release's, that step marked as one 0.2.0 could not read.
    const next: StoreFormat = {
      ...LEDGER_FORMAT,
      migrations: [...LEDGER_FORMAT.migrations, 'CREATE TABLE qg_next (x INTEGER) STRICT'],
      changes: [...(LEDGER_FORMAT.changes ?? []), 'a table of the next format'],
      explicitFrom: LEDGER_FORMAT.migrations.length,
    };
    const file = olderLedger(2);
    let err: unknown;
    try {
      openStore(next, { path: file });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'QG_STORE_OUTDATED' });
    expect(String((err as Error).message)).toContain('a table of the next format');
    // The steps before it were taken: the previous release reads the file as it is now.
    expect(schemaOf(file).version).toBe(LEDGER_FORMAT.migrations.length);
    const dry = migrateStore(next, { path: file, dryRun: true });
    expect(dry.steps).toEqual([
      { from: LEDGER_FORMAT.migrations.length, change: 'a table of the next format', previousReads: false },
    ]);
    expect(schemaOf(file).version).toBe(LEDGER_FORMAT.migrations.length);
    migrateStore(next, { path: file });
    expect(schemaOf(file)).toMatchObject({ version: next.migrations.length });
    expect(schemaOf(file).tables).toContain('qg_next');
    const { db } = openStore(next, { path: file });
    db.close();
  });
});

describe('quota-guard migrate', () => {
  it('says what each step changes; --dry-run changes nothing; a second run has nothing to do', async () => {
    const ledger = olderLedger(2);
    const cache = join(dir, `formats-cache-${n++}.db`);
    openStore(
      { ...CACHE_FORMAT, migrations: CACHE_FORMAT.migrations.slice(0, 2) },
      { path: cache },
    ).db.close();
    const config = configFile(
      `store: "sqlite:${ledger}"\ncache: { path: "${cache}" }\ncredentials:\n  - id: main\n    apiKeyEnv: QG_FORMATS_KEY\n`,
    );
    const before = [digest(ledger), digest(cache)];
    const dry = await cli('migrate', '--dry-run', '--config', config);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`ledger ${ledger}: would take 2 steps (schema version 2 to 4)`);
    expect(dry.stdout).toContain(
      '  2: entry ids remembered with their first decision (qg_spend_entry) (the previous release reads the result)',
    );
    expect(dry.stdout).toContain(`cache ${cache}: would take 1 step (schema version 2 to 3)`);
    expect(dry.stdout).toMatch(/dry run: nothing was changed\n$/);
    expect([digest(ledger), digest(cache)]).toEqual(before);

    const done = await cli('migrate', '--json', '--config', config);
    expect(done.code).toBe(0);
    const report = JSON.parse(done.stdout) as {
      dryRun: boolean;
      stores: Array<{ store: string; from: number; to: number; steps: unknown[] }>;
    };
    expect(report).toMatchObject({
      dryRun: false,
      stores: [
        { store: 'ledger', kind: 'sqlite', from: 2, to: 4 },
        { store: 'cache', kind: 'sqlite', from: 2, to: 3 },
      ],
    });
    expect(report.stores[0]!.steps).toHaveLength(2);
    expect(schemaOf(ledger).version).toBe(4);
    // The cache's index was caught up by a writer's open: search reads it at once.
    expect((await cli('search', 'anything', '--config', config)).code).toBe(0);

    const again = await cli('migrate', '--config', config);
    expect(again.stdout).toContain(`ledger ${ledger}: schema version 4, current: nothing to do`);
    expect(again.stdout).toContain(`cache ${cache}: schema version 3, current: nothing to do`);
  });

  it('creates nothing where there is no store yet', async () => {
    const ledger = join(dir, `formats-none-${n++}`, 'quota.db');
    const cache = join(dir, `formats-none-${n++}`, 'cache.db');
    const config = configFile(
      `store: "sqlite:${ledger}"\ncache: { path: "${cache}" }\ncredentials:\n  - id: main\n    apiKeyEnv: QG_FORMATS_KEY\n`,
    );
    const r = await cli('migrate', '--config', config);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      `ledger ${ledger}: none yet (the first command that writes creates it at schema version 4): nothing to do`,
    );
    expect(existsSync(ledger)).toBe(false);
    expect(existsSync(join(ledger, '..'))).toBe(false);
  });
});
