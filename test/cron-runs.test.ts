/**
 * Planning a day's runs leaves nothing behind: node-cron keeps every task it creates in a
 * process-wide registry until destroyed, so a long-lived process (`serve` computes the day's runs
 * for every status page and scrape) grew by one task per call without bound.
 */
import { describe, expect, it } from 'vitest';
import { BackfillPacer } from '../src/guard/pacing.js';
import { nodeCron } from '../src/time-libs.js';
import { parseYouTubeConfig as parseConfig } from '../src/youtube/config/part.js';
import { cronRuns } from '../src/youtube/cron-runs.js';

describe('cronRuns', () => {
  it('leaves no task in node-cron’s registry, however often it is called', () => {
    const before = nodeCron().getTasks().size;
    const day = Date.parse('2026-11-23T00:00:00Z');
    for (let i = 0; i < 500; i++)
      expect(cronRuns('0 * * * *', 'UTC', day, day + 86_400_000)).toHaveLength(24);
    expect(() => cronRuns('0 * * * *', 'Nowhere/Else', day, day + 1)).toThrow(/unknown time zone/);
    expect(nodeCron().getTasks().size).toBe(before);
  });

  it('nor does a new pacer per status report (what serve does per request)', () => {
    const config = parseConfig({}, { env: {} });
    const before = nodeCron().getTasks().size;
    const c = config.credentials[0]!;
    for (let i = 0; i < 200; i++) new BackfillPacer(config).day(c, Date.parse('2026-11-23T12:00:00Z') + i);
    expect(nodeCron().getTasks().size).toBe(before);
  });
});
