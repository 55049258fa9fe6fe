/**
 * Names are data: every name `Object.prototype` has (`constructor`, `__proto__`, `toString`,
 * `valueOf`, `hasOwnProperty`, `isPrototypeOf` …) given as a credential, bucket, method, profile,
 * budget, region or call site is an unknown name like any other, in the config, in its lookups and
 * in the guard's spends through them: the ordinary error, never a TypeError or a hit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketOf, methodOf } from '../../src/config/lookups.js';
import { ConfigError, isQuotaGuardError } from '../../src/errors.js';
import { createGuard, type Guard } from '../../src/guard/guard.js';
import { openLedger } from '../../src/ledger/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { getProfile, methodSpec } from '../../src/profiles/profiles.js';
import { parseYouTubeConfig } from '../../src/youtube/config/part.js';

const NAMES = Object.getOwnPropertyNames(Object.prototype);

/** The code of the QuotaGuardError `fn` throws (a non-ours error fails the test). */
function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isQuotaGuardError(e)) return e.code;
    throw e;
  }
  return 'none';
}

function problemsOf(raw: unknown): string[] {
  try {
    parseYouTubeConfig(raw, { env: {} });
  } catch (e) {
    if (e instanceof ConfigError) return [...e.problems];
    throw e;
  }
  return [];
}

const config = parseYouTubeConfig(
  {
    store: 'sqlite::memory:',
    regions: ['US'],
    budgets: [{ id: 'hourly', bucket: 'units', limit: 9, window: '1h' }],
  },
  { env: {} },
);
const credential = config.credential('default');

describe('every Object.prototype name', () => {
  it('is a list of the names that crashed lookups', () => {
    expect(NAMES).toEqual(expect.arrayContaining(['constructor', '__proto__', 'toString', 'valueOf']));
    expect(NAMES.length).toBeGreaterThanOrEqual(12);
  });

  it.each(NAMES)('%s: an unknown credential, bucket, method, region and profile in the lookups', (name) => {
    expect(codeOf(() => config.credential(name))).toBe('QG_UNKNOWN_CREDENTIAL');
    expect(codeOf(() => config.apiKey(name))).toBe('QG_UNKNOWN_CREDENTIAL');
    expect(codeOf(() => bucketOf(credential, name))).toBe('QG_UNKNOWN_BUCKET');
    expect(codeOf(() => methodOf(credential, name))).toBe('QG_UNKNOWN_METHOD');
    expect(codeOf(() => config.region(name))).toBe('QG_UNKNOWN_REGION');
    expect(getProfile(name, config.profiles)).toBeUndefined();
    expect(methodSpec(config.profiles['youtube-2026']!, name)).toBeUndefined();
  });

  it.each(NAMES)('%s: the ordinary unknown-name problem wherever a config file names it', (name) => {
    const lines = problemsOf({
      credentials: [{ id: 'a' }, { id: 'b', profile: name }],
      budgets: [
        { id: 'by-bucket', credential: 'a', bucket: name, limit: 1, window: '1h' },
        { id: 'by-method', credential: 'a', methods: [name], limit: 1, window: '1h' },
        { id: 'by-credential', credential: name, bucket: 'units', limit: 1, window: '1h' },
      ],
      expected: [{ credential: 'a', method: name, callsPerDay: 1 }],
      backfill: { pace: name },
    });
    const text = lines.join('\n');
    expect(text).not.toMatch(/TypeError|undefined|\[object|function/);
    // The profile name fails its own pattern when it is not an id; either way it is refused.
    expect(text).toMatch(/^credentials\[1\]\.profile: /m);
    expect(text).toMatch(/^budgets\[0\]\.bucket: unknown bucket /m);
    expect(text).toMatch(/^budgets\[1\]\.methods\[0\]: unknown method /m);
    expect(text).toMatch(/^budgets\[2\]\.credential: unknown credential /m);
    expect(text).toMatch(/^expected\[0\]\.method: unknown method /m);
    expect(text).toMatch(/^backfill\.pace: must be day, none or the id of a budget/m);
  });
});

describe("the guard's spends by such names", () => {
  let ledger: Ledger;
  let guard: Guard;
  beforeAll(async () => {
    ledger = await openLedger('sqlite::memory:');
    guard = createGuard({ config, ledger });
  });
  afterAll(() => ledger.close());

  it.each(
    NAMES,
  )('%s: as a credential, a bucket, a method, a call site: the ordinary error or its policy', async (name) => {
    const refused = async (args: Parameters<Guard['spend']>[0]) => {
      try {
        await guard.spend(args);
      } catch (e) {
        if (isQuotaGuardError(e)) return e.code;
        throw e;
      }
      return 'spent';
    };
    expect(await refused({ credential: name, cost: 1 })).toBe('QG_UNKNOWN_CREDENTIAL');
    expect(await refused({ credential: 'default', bucket: name, cost: 1 })).toBe('QG_UNKNOWN_BUCKET');
    expect(await refused({ credential: 'default', method: name })).toBe('QG_UNKNOWN_METHOD');
    expect(await refused({ credential: 'default', tier: name as 'manual', cost: 1 })).toBe(
      'QG_INVALID_ARGUMENT',
    );
    // A call site is not looked up to spend, only for the store-down policy: spending works.
    expect(await refused({ credential: 'default', cost: 1, site: name, tag: `${name}:x` })).toBe('spent');
  });
});
