import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { dayKey, dayLengthMs, isValidTimeZone, nextMidnight, startOfDay } from '../src/calendar-day.js';

const LA = 'America/Los_Angeles';

describe('upstream-day arithmetic in America/Los_Angeles', () => {
  it('finds the next midnight in PST (UTC-8)', () => {
    const now = Date.parse('2026-01-15T20:00:00Z'); // 12:00 PST
    expect(new Date(nextMidnight(LA, now)).toISOString()).toBe('2026-01-16T08:00:00.000Z');
    expect(dayKey(LA, now)).toBe('2026-01-15');
  });

  it('finds the next midnight in PDT (UTC-7)', () => {
    const now = Date.parse('2026-07-15T06:59:59Z'); // 23:59:59 PDT on the 14th
    expect(new Date(nextMidnight(LA, now)).toISOString()).toBe('2026-07-15T07:00:00.000Z');
    expect(dayKey(LA, now)).toBe('2026-07-14');
  });

  it('has a 23-hour day when clocks spring forward and a 25-hour day when they fall back', () => {
    expect(dayLengthMs(LA, Date.parse('2026-03-08T12:00:00Z'))).toBe(23 * 3_600_000);
    expect(dayLengthMs(LA, Date.parse('2026-11-01T12:00:00Z'))).toBe(25 * 3_600_000);
    expect(dayLengthMs(LA, Date.parse('2026-11-02T12:00:00Z'))).toBe(24 * 3_600_000);
  });

  it('treats midnight itself as the start of a new day', () => {
    const midnight = Date.parse('2026-01-16T08:00:00Z');
    expect(startOfDay(LA, midnight)).toBe(midnight);
    expect(nextMidnight(LA, midnight)).toBe(midnight + 86_400_000);
  });

  it('rejects an unknown zone with a typed error', () => {
    expect(() => nextMidnight('Mars/Olympus', 0)).toThrow(
      expect.objectContaining({ code: 'QG_INVALID_ARGUMENT' }),
    );
  });
});

describe('isValidTimeZone', () => {
  it('accepts what Luxon accepts: canonical names, aliases, UTC offsets; nothing else', () => {
    const valid = ['America/Los_Angeles', 'UTC', 'Etc/UTC', 'US/Pacific', 'Asia/Calcutta', 'utc', 'UTC+2'];
    for (const z of valid) expect(isValidTimeZone(z), z).toBe(true);
    for (const z of ['', 'Mars/Olympus', 'America/Los Angeles', 'PST8PDT/x']) {
      expect(isValidTimeZone(z), z).toBe(DateTime.now().setZone(z).isValid);
      expect(isValidTimeZone(z), z).toBe(false);
    }
  });
});
