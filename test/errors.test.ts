import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, exitCodeFor, InvalidArgumentError, QuotaGuardError } from '../src/errors.js';

describe('error codes', () => {
  const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');

  it('documents every code with its exit status in docs/errors.md', () => {
    for (const [code, exit] of Object.entries(ERROR_CODES)) {
      expect(doc, code).toMatch(new RegExp(`\\| \`${code}\` \\| ${exit} \\|`));
    }
  });

  it('documents no code that does not exist', () => {
    const documented = [...doc.matchAll(/\| `(QG_[A-Z_]+)` \|/g)].map((m) => m[1]);
    expect(documented.sort()).toEqual(Object.keys(ERROR_CODES).sort());
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
