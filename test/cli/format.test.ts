import { describe, expect, it } from 'vitest';
import { formatNumber } from '../../src/cli/format.js';

describe('formatNumber', () => {
  it('writes every number as Intl.NumberFormat en-US does, whole numbers included', () => {
    const en = new Intl.NumberFormat('en-US');
    const whole = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 9999, 10_000, 12_345, 123_456, 999_999, 1_000_000];
    const values = [
      ...whole,
      ...whole.map((n) => -n),
      -0,
      1234567890123,
      Number.MAX_SAFE_INTEGER,
      -Number.MAX_SAFE_INTEGER,
      2 ** 60,
      1e21,
      0.5,
      1234.5678,
      -0.0004,
      Number.NaN,
      Number.POSITIVE_INFINITY,
    ];
    for (const n of values) expect(formatNumber(n), String(n)).toBe(en.format(n));
  });
});
