/**
 * Repeated warnings said once with a count: the first line as it comes, the repeats within the
 * interval counted into one line when it ends, other lines untouched.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { limitRepeats } from '../src/log-limit.js';

afterEach(() => {
  vi.useRealTimers();
});

it('writes the first warning, counts its repeats into one line, and starts again after the interval', () => {
  vi.useFakeTimers();
  const lines: Array<[string, Record<string, unknown>, string]> = [];
  const base = {
    info: (o: object, m: string) => lines.push(['info', o as Record<string, unknown>, m]),
    warn: (o: object, m: string) => lines.push(['warn', o as Record<string, unknown>, m]),
    error: (o: object, m: string) => lines.push(['error', o as Record<string, unknown>, m]),
  };
  const log = limitRepeats(base, { intervalMs: 10_000 });
  for (let i = 0; i < 4_000; i++) log.warn({ n: i }, 'ledger store unavailable');
  log.warn({}, 'something else');
  log.info({ a: 1 }, 'ledger store unavailable');
  log.info({ a: 2 }, 'ledger store unavailable');
  expect(lines.map(([level, , m]) => `${level} ${m}`)).toEqual([
    'warn ledger store unavailable',
    'warn something else',
    'info ledger store unavailable',
    'info ledger store unavailable',
  ]);
  vi.advanceTimersByTime(10_000);
  expect(lines[4]).toEqual([
    'warn',
    { n: 3_999, repeated: 3_999, withinMs: 10_000 },
    'ledger store unavailable (3999 more like it in the last 10 s)',
  ]);
  // Nothing held back for the line said once.
  expect(lines).toHaveLength(5);
  log.warn({ n: 'again' }, 'ledger store unavailable');
  expect(lines[5]).toEqual(['warn', { n: 'again' }, 'ledger store unavailable']);
  log.error?.({}, 'failed');
  log.error?.({}, 'failed');
  vi.advanceTimersByTime(10_000);
  expect(lines.slice(6).map(([level, , m]) => `${level} ${m}`)).toEqual([
    'error failed',
    'error failed (1 more like it in the last 10 s)',
  ]);
});
