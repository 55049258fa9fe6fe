/**
 * `serve` reads only and never creates a store; `serve --decisions` spends, so on a host where no
 * job has run yet it opens (and so creates) the SQLite ledger as `spend` does, and its first spend
 * is recorded there.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { openLedger } from '../../src/index.js';
import { cli, expectOneLine } from '../cli/helpers.js';
import { tmpPath } from '../job-library/helpers.js';
import { ApiClient, type Served, startServe, writeConfig } from './helpers.js';

let served: Served | undefined;
afterAll(async () => {
  await served?.stop();
});

describe('serve --decisions on a host with no ledger yet', () => {
  it('creates the SQLite ledger and records the first spend in it', async () => {
    const path = tmpPath('first-spend.db');
    const config = writeConfig({ store: `sqlite:${path}`, cache: { path: tmpPath('cache.db') } });
    expect(existsSync(path)).toBe(false);
    served = await startServe(config);
    const client = new ApiClient(served.url);
    const r = await client.call('POST', '/v1/spend', {
      credential: 'default',
      method: 'videos.list',
      entry: 'first-spend-1',
    });
    await client.close();
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ allowed: true, cost: 1 });
    await served.stop();
    served = undefined;
    const ledger = await openLedger(`sqlite:${path}`);
    try {
      const snap = await ledger.peek({ key: 'qg:{default}:units', windowMs: 86_400_000 });
      expect(snap.used).toBe(1);
    } finally {
      await ledger.close();
    }
  });
});

describe('serve --decisions with a tokens file it cannot use', () => {
  it('refuses it in one line (78) before the store opens: no ledger is created', async () => {
    const path = tmpPath('never-created.db');
    const config = writeConfig({ store: `sqlite:${path}`, cache: { path: tmpPath('cache-2.db') } });
    const bad = tmpPath('tokens-bad.yaml');
    writeFileSync(bad, 'tokens:\n  - name: php cron\n');
    for (const tokens of [tmpPath('tokens-missing.yaml'), bad]) {
      const r = await cli(
        'serve',
        '--decisions',
        '--tokens',
        tokens,
        '--http',
        '127.0.0.1:0',
        '--config',
        config,
      );
      expect(r.code, r.stderr).toBe(78);
      expectOneLine(r.stderr, /tokens/);
      expect(existsSync(path), tokens).toBe(false);
    }
  });
});
