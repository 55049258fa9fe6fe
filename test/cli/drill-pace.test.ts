/**
 * A drill whose settings ask the backfill for more upstream calls a second than a drill keeps up with
 * is refused before the day starts, with the settings that would work.
 */
import { describe, expect, it } from 'vitest';
import { drillPace, MAX_DRILL_CALLS_PER_SECOND } from '../../src/drill/drill.js';
import { cli, expectOneLine } from './helpers.js';

describe('drill settings that cannot succeed', () => {
  it('a 24 s day on youtube-2026 at 10,000 units: one line naming --quota and --day-seconds, exit 64, no day run', async () => {
    const out = await cli('drill', '--day-seconds', '24', '--profile', 'youtube-2026');
    expect(out.code).toBe(64);
    expect(out.stdout).toBe('');
    expectOneLine(
      out.stderr,
      /a 24 s day at 10,000 units \(youtube-2026\) asks the backfill for [\d,.]+ upstream calls a second.*use --quota \d+ or less, or --day-seconds \d+ or more \(QG_INVALID_ARGUMENT\)$/,
    );
  });

  it('suggests a quota and a day length that are within reach, and the next step beyond them is not', () => {
    const pace = drillPace({ daySeconds: 24, profile: 'youtube-2026', quota: 10_000 });
    expect(pace.feasible).toBe(false);
    expect(pace.callsPerSecond).toBeGreaterThan(MAX_DRILL_CALLS_PER_SECOND);
    const q = pace.maxQuota as number;
    expect(drillPace({ daySeconds: 24, profile: 'youtube-2026', quota: q }).feasible).toBe(true);
    expect(drillPace({ daySeconds: 24, profile: 'youtube-2026', quota: q + 100 }).feasible).toBe(false);
    const day = pace.minDaySeconds as number;
    expect(drillPace({ daySeconds: day, profile: 'youtube-2026', quota: 10_000 }).feasible).toBe(true);
  });

  it('accepts the documented settings: the default 120 s day, and the test suite’s 24 s day at 1,000 units', () => {
    for (const profile of ['youtube-classic', 'youtube-2026'] as const)
      expect(drillPace({ daySeconds: 120, profile, quota: 10_000 }).feasible).toBe(true);
    expect(drillPace({ daySeconds: 24, profile: 'youtube-classic', quota: 1_000 }).feasible).toBe(true);
  });
});
