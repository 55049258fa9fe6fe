import { describe, expect, it } from 'vitest';
import { count, formatNumber } from '../../src/cli/render/format.js';

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

describe('count', () => {
  it('says one unit, and groups the thousands of the rest', () => {
    expect(count(1, 'unit')).toBe('1 unit');
    expect(count(0, 'unit')).toBe('0 units');
    expect(count(1_576, 'video')).toBe('1,576 videos');
    expect(count(1_232, 'scheduled run')).toBe('1,232 scheduled runs');
  });
});
