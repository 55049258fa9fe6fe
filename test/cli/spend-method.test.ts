/**
 * `spend --method` takes the cost and bucket from the profile, spends the scheduled tier unless
 * asked, and `--entry … --report` settles what became of an entry's call.
 */
import { describe, expect, it } from 'vitest';
import { ApiClient, startServe } from '../api/helpers.js';
import { checkAnswer } from '../api/openapi.js';
import { cli, configFile, sqliteStore } from './helpers.js';

describe('spend --method and --report', () => {
  it('spends a method’s cost from its bucket at the scheduled tier, once per entry, and refunds it', async () => {
    const cfg = configFile(`store: ${sqliteStore()}\ncredentials:\n  - id: default\n`);
    const json = async (...args: string[]) => {
      const r = await cli('spend', 'default', ...args, '--json', '--config', cfg);
      return { code: r.code, d: JSON.parse(r.stdout) as Record<string, unknown> };
    };
    const first = await json('--method', 'search.list', '--entry', 'job-7');
    expect(first.code).toBe(0);
    expect(first.d).toMatchObject({
      allowed: true,
      bucket: 'search.list',
      cost: 1,
      tier: 'scheduled',
      entry: 'job-7',
    });
    const again = await json('--method', 'search.list', '--entry', 'job-7');
    expect(again.d).toMatchObject({ allowed: true, replayed: true, remaining: first.d['remaining'] });
    const other = await cli(
      'spend',
      'default',
      '--method',
      'videos.list',
      '--entry',
      'job-7',
      '--config',
      cfg,
    );
    expect(other.code).toBe(64);
    expect(other.stderr).toMatch(/entry 'job-7' was spent with another request/);

    const refund = await cli('spend', 'default', '--entry', 'job-7', '--report', 'refund', '--config', cfg);
    expect(refund).toMatchObject({
      code: 0,
      stdout: 'refunded: entry job-7 (1 unit of default/search.list)\n',
    });
    // The same report again refunds nothing, and says so; a `sent` after it does not claim a charge.
    const twice = await cli(
      'spend',
      'default',
      '--entry',
      'job-7',
      '--report',
      'never-sent',
      '--config',
      cfg,
    );
    expect(twice.code).toBe(0);
    expect(twice.stdout).toMatch(
      /^not refunded: entry job-7 \(1 unit of default\/search\.list\): nothing left/,
    );
    const sent = await cli('spend', 'default', '--entry', 'job-7', '--report', 'sent', '--config', cfg);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^sent: entry job-7 .*: nothing changed/);
    expect(sent.stdout).not.toMatch(/charged/);
    const after = await json('--method', 'search.list');
    expect(after.d['remaining']).toBe(first.d['remaining']);

    const unknown = await cli('spend', 'default', '--entry', 'nope', '--report', 'sent', '--config', cfg);
    expect(unknown.code).toBe(66);
    const exhausted = await cli(
      'spend',
      'default',
      '--entry',
      'job-7',
      '--report',
      'exhausted',
      '--config',
      cfg,
    );
    expect(exhausted.code).toBe(0);
    const blocked = await json('--method', 'search.list');
    expect(blocked).toMatchObject({ code: 75, d: { allowed: false, reason: 'blocked' } });
  });

  it('--json answers a spend as the decision API does (POST /v1/spend), allowed and denied', async () => {
    const cfg = configFile(
      `store: ${sqliteStore()}\ncredentials:\n  - id: default\n    buckets: { units: { quota: 100, reserve: 0 } }\n`,
    );
    const served = await startServe(cfg);
    const api = new ApiClient(served.url);
    try {
      for (const cost of [30, 90]) {
        const viaApi = (await api.spend({ credential: 'default', bucket: 'units', cost })).body as Record<
          string,
          unknown
        >;
        const r = await cli(
          'spend',
          'default',
          '--bucket',
          'units',
          '--cost',
          String(cost),
          '--json',
          '--config',
          cfg,
        );
        const viaCli = JSON.parse(r.stdout) as Record<string, unknown>;
        // The document's schema of a spend's answer holds for the command's too.
        checkAnswer('POST', '/v1/spend', 200, viaCli);
        expect(Object.keys(viaCli).sort(), `cost ${cost}`).toEqual(Object.keys(viaApi).sort());
        for (const k of ['allowed', 'reason', 'credential', 'bucket', 'tier', 'cost', 'ceiling'])
          expect(viaCli[k], k).toEqual(viaApi[k]);
        expect(viaCli['entry']).toMatch(/^[\w-]{8,}$/);
      }
    } finally {
      await api.close();
      await served.stop();
    }
  });
});
