/**
 * Errors an operator meets after editing the config name the bucket or budget, the config setting
 * and what to change — never a ledger key (`qg:{…}`) or the index of an internal array.
 */
import { describe, expect, it } from 'vitest';
import { cli, configFile, expectOneLine, sqliteStore } from './helpers.js';

function budgetConfig(store: string, window: string, limit = 10): string {
  return configFile(
    `store: ${store}\nbudgets:\n  - { id: small, bucket: units, limit: ${limit}, window: ${window} }\n`,
  );
}

function expectOperatorTerms(stderr: string): void {
  expect(stderr).not.toContain('qg:{');
  expect(stderr).not.toMatch(/budgets\[\d+\]\.(windowMs|limit)/);
}

describe('errors in the config’s terms', () => {
  it('a budget whose window was changed while its log holds spends: names the budget, both windows and the way out', async () => {
    const store = sqliteStore();
    expect((await cli('spend', 'default', '--cost', '1', '--config', budgetConfig(store, '1h'))).code).toBe(
      0,
    );
    const changed = budgetConfig(store, '2h');
    for (const args of [['spend', 'default', '--cost', '1'], ['status']]) {
      const out = await cli(...args, '--config', changed);
      expect(out.code).toBe(64);
      expectOneLine(
        out.stderr,
        /budget 'small' has a window of 2h in the config .* logged its spends under 1h.*set it back to 1h until then, or give the budget a new id .*\(QG_WINDOW_MISMATCH\)$/,
      );
      expectOperatorTerms(out.stderr);
    }
  });

  it('a bucket whose window was changed: names the credential, the bucket and the config fields', async () => {
    const store = sqliteStore();
    const day = configFile(`store: ${store}\n`);
    expect((await cli('spend', 'default', '--cost', '1', '--config', day)).code).toBe(0);
    const half = configFile(`store: ${store}\ncredentials:\n  - id: default\n    window: 12h\n`);
    const out = await cli('spend', 'default', '--cost', '1', '--config', half);
    expect(out.code).toBe(64);
    expectOneLine(
      out.stderr,
      /bucket 'units' of credential 'default' has a window of 12h in the config \(credentials\[0\]\.window or credentials\[0\]\.buckets\.units\.window\) .* under 1d.*set it back to 1d until then \(QG_WINDOW_MISMATCH\)$/,
    );
    expectOperatorTerms(out.stderr);
  });

  it('a cost larger than a budget or a quota: names what limits it and where it is set', async () => {
    const cfg = budgetConfig(sqliteStore(), '1h');
    const budget = await cli('spend', 'default', '--cost', '50', '--config', cfg);
    expect(budget.code).toBe(64);
    expectOneLine(
      budget.stderr,
      /a cost of 50 units can never be allowed: budget 'small' allows at most 10 \(the limit of budget 'small' in budgets\) \(QG_COST_EXCEEDS_LIMIT\)$/,
    );
    expectOperatorTerms(budget.stderr);
    const quota = await cli('spend', 'default', '--cost', '20000', '--tier', 'manual', '--config', cfg);
    expect(quota.code).toBe(64);
    expectOneLine(
      quota.stderr,
      /a cost of 20,000 units can never be allowed: bucket 'units' of credential 'default' allows at most 10,000 \(credentials\[0\]\.buckets\.units\.quota,/,
    );
    expectOperatorTerms(quota.stderr);
  });
});
