/**
 * `spend --method` takes the cost and bucket from the profile, spends the scheduled tier unless
 * asked, and `--entry … --report` settles what became of an entry's call.
 */
import { describe, expect, it } from 'vitest';
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
});
