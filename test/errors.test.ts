import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ERROR_CODES,
  exitCodeFor,
  InvalidArgumentError,
  isQuotaGuardError,
  QuotaGuardError,
} from '../src/errors.js';
import { YOUTUBE_ERROR_CODES } from '../src/youtube/errors.js';

describe('error codes', () => {
  const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  const [core, app] = doc.split("### The YouTube application's codes");

  it("documents every code with its exit status in docs/errors.md: the core's, then the application's", () => {
    for (const [code, exit] of Object.entries(ERROR_CODES)) {
      expect(core, code).toMatch(new RegExp(`\\| \`${code}\` \\| ${exit} \\|`));
    }
    for (const [code, exit] of Object.entries(YOUTUBE_ERROR_CODES)) {
      expect(app, code).toMatch(new RegExp(`\\| \`${code}\` \\| ${exit} \\|`));
    }
  });

  it('documents no code that does not exist', () => {
    const documented = (text = '') => [...text.matchAll(/\| `(QG_[A-Z_]+)` \|/g)].map((m) => m[1]).sort();
    expect(documented(core)).toEqual(Object.keys(ERROR_CODES).sort());
    expect(documented(app)).toEqual(Object.keys(YOUTUBE_ERROR_CODES).sort());
  });

  it("keeps the application's codes out of the core's list, and knows them once registered", () => {
    for (const code of Object.keys(YOUTUBE_ERROR_CODES)) expect(Object.hasOwn(ERROR_CODES, code)).toBe(false);
    const e = new QuotaGuardError('QG_QUERY_INVALID', 'empty query');
    expect(exitCodeFor(e)).toBe(64);
    expect(isQuotaGuardError({ code: 'QG_CACHE_SCHEMA', message: 'x' })).toBe(true);
    expect(isQuotaGuardError({ code: 'QG_NOT_A_CODE', message: 'x' })).toBe(false);
  });

  it('maps errors to exit codes, and foreign errors to 70', () => {
    expect(exitCodeFor(new QuotaGuardError('QG_CONFIG_INVALID', 'x'))).toBe(78);
    expect(exitCodeFor(new InvalidArgumentError('cost', 'must be an integer >= 1'))).toBe(64);
    expect(exitCodeFor(new Error('boom'))).toBe(70);
  });

  it('names the field in an invalid-argument message', () => {
    const e = new InvalidArgumentError('budgets[0].limit', 'must be a positive integer');
    expect(e.message).toBe('budgets[0].limit: must be a positive integer');
    expect(e.field).toBe('budgets[0].limit');
    expect(e.code).toBe('QG_INVALID_ARGUMENT');
  });
});
