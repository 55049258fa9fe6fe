import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../cache/helpers.js';

const t = tempDir('qg-uri-');
afterAll(() => t.cleanup());

describe('URI file names (the read-only open needs them)', () => {
  it('are on once src/sqlite is loaded, even when the environment turned them off', () => {
    const file = join(t.dir, 'plain.db');
    const script = `
      const { openStore } = await import(${JSON.stringify(join(import.meta.dirname, '../../src/sqlite/open.ts'))});
      const { LEDGER_FORMAT } = await import(${JSON.stringify(join(import.meta.dirname, '../../src/ledger/sqlite.ts'))});
      openStore(LEDGER_FORMAT, { path: ${JSON.stringify(file)} }).db.close();
      const { sqliteDriver } = await import(${JSON.stringify(join(import.meta.dirname, '../../src/sqlite/driver.ts'))});
      const Database = sqliteDriver().Database;
      const db = new Database('file:' + ${JSON.stringify(file)} + '?immutable=1', { readonly: true, fileMustExist: true });
      process.stdout.write(String(db.pragma('user_version', { simple: true })));
      db.close();
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { PATH: process.env['PATH'] ?? '', SQLITE_USE_URI: '0' },
      cwd: join(import.meta.dirname, '../..'),
      encoding: 'utf8',
    });
    expect(Number(out)).toBeGreaterThan(0);
  });
});
