import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  loadYouTubeConfig as loadConfig,
  parseYouTubeConfig as parseConfig,
} from '../../src/youtube/config/part.js';
import { cronRuns, maxInDay, maxInWindow } from '../../src/youtube/cron-runs.js';
import { DEFAULT_REGIONS } from '../../src/youtube/defaults.js';
import { planBudget } from '../../src/youtube/plan/plan.js';
import type { PlanChange, PlanReport } from '../../src/youtube/plan/types.js';
import { cli } from '../cli/helpers.js';

const FIXTURES = 'test/plan/fixtures';
const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);

function bucket(report: PlanReport, credential: string, id: string) {
  const b = report.buckets.find((x) => x.credential === credential && x.bucket === id);
  if (!b) throw new Error(`no plan for ${credential}/${id}`);
  return b;
}

describe('cron runs as the scheduler fires them', () => {
  it('counts 23 hourly runs on the spring-forward day and 25 on the fall-back day', () => {
    const la = 'America/Los_Angeles';
    expect(cronRuns('0 * * * *', la, at('2026-03-08T08:00:00Z'), at('2026-03-09T07:00:00Z'))).toHaveLength(
      23,
    );
    expect(cronRuns('0 * * * *', la, at('2026-11-01T07:00:00Z'), at('2026-11-02T08:00:00Z'))).toHaveLength(
      25,
    );
    // 02:30 does not exist on 2026-03-08 in Los Angeles; 01:30 happens twice on 2026-11-01.
    expect(cronRuns('30 2 * * *', la, at('2026-03-07T00:00:00Z'), at('2026-03-10T00:00:00Z'))).toHaveLength(
      2,
    );
    expect(
      cronRuns('30 1 * * *', la, at('2026-11-01T00:00:00Z'), at('2026-11-02T00:00:00Z')).map((t) =>
        new Date(t).toISOString(),
      ),
    ).toEqual(['2026-11-01T08:30:00.000Z', '2026-11-01T09:30:00.000Z']);
  });

  it('honours day-of-week, seconds and the schedule’s time zone', () => {
    expect(
      cronRuns('0 9 * * 1-5', 'UTC', at('2026-01-05T00:00:00Z'), at('2026-01-12T00:00:00Z')),
    ).toHaveLength(5);
    expect(
      cronRuns('*/5 * * * * *', 'UTC', at('2026-01-05T00:00:00Z'), at('2026-01-05T00:01:00Z')),
    ).toHaveLength(12);
    const [first] = cronRuns(
      '0 9 * * *',
      'Asia/Kolkata',
      at('2026-01-05T00:00:00Z'),
      at('2026-01-06T00:00:00Z'),
    );
    expect(new Date(first!).toISOString()).toBe('2026-01-05T03:30:00.000Z');
  });

  it('finds the most spent in any sliding window and in any calendar day', () => {
    const spends = [0, 10, 20, 60, 65].map((m) => ({
      at: at('2026-01-05T00:00:00Z') + m * 60_000,
      units: 2,
    }));
    expect(maxInWindow(spends, HOUR)).toBe(8); // 10, 20, 60, 65
    expect(maxInWindow(spends, 30 * 60_000)).toBe(6);
    expect(maxInDay(spends, 'UTC', at('2026-01-05T00:00:00Z'), at('2026-01-06T00:00:00Z'))).toBe(10);
    // In Los Angeles the same spends straddle no midnight but fall in 2026-01-04; a window that does
    // not hold that whole day counts nothing.
    expect(
      maxInDay(spends, 'America/Los_Angeles', at('2026-01-05T00:00:00Z'), at('2026-01-06T00:00:00Z')),
    ).toBe(0);
  });
});

describe('plan on three configs', () => {
  const NOW = at('2026-01-12T00:00:00Z');

  it('fits: trending, a competing backfill and manual searches under the classic profile', async () => {
    const report = planBudget(loadConfig({ file: `${FIXTURES}/fits.yaml`, env: {} }), { now: NOW });
    expect(report).toMatchObject({ fits: true, jobsCredential: 'legacy', problems: [] });
    const units = bucket(report, 'legacy', 'units');
    expect(units.lines.map((l) => [l.id, l.tier, l.units])).toEqual([
      ['trending', 'scheduled', 768], // 8 regions × 4 pages × 24 runs × 1 unit
      ['search.list:manual', 'manual', 300], // 3 calls × 100 units
      ['backfill', 'backfill', 8_000 - 768], // the backfill ceiling less the scheduled spend
    ]);
    expect(units.checks.map((k) => [k.kind, k.limit, k.demand, k.fits])).toEqual([
      ['ceiling', 9_500, 768, true],
      ['headroom', 1_500, 768, true],
      ['manual', 10_000 - 8_000 - 768, 300, true],
    ]);
    const r = await cli('plan', '--config', `${FIXTURES}/fits.yaml`);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /trending\s+scheduled\s+videos\.list\s+768\s+8 regions × 4 pages × 24 runs × 1 unit/,
    );
    expect(r.stdout).toContain('FITS');
  });

  it('overspends: says by how much and what to change, exit 65', async () => {
    const report = planBudget(loadConfig({ file: `${FIXTURES}/overspends.yaml`, env: {} }), { now: NOW });
    expect(report.fits).toBe(false);
    const units = bucket(report, 'default', 'units');
    // 12 charts (US has 3 categories) × 4 pages × 288 runs a day × 1 unit.
    expect(units.lines[0]).toMatchObject({ id: 'trending', units: 13_824, runs: 288 });
    const [ceiling] = units.checks;
    expect(ceiling).toMatchObject({
      kind: 'ceiling',
      limit: 9_500,
      demand: 13_824,
      fits: false,
      over: 4_324,
    });
    const fixes = ceiling!.fixes.join('\n');
    expect(fixes).toContain('run trending 144 times a day (now 288)'); // 12 × 4 × 144 = 6,912
    expect(fixes).toContain('maxPages: 2'); // 12 × 2 × 288 = 6,912
    // US (3 charts) and KR: 8 charts × 4 × 288 = 9,216 ≤ 9,500.
    expect(fixes).toContain('move 2 regions (US, KR) to another credential');
    expect(fixes).toContain('quota to at least 14,324');
    expect(report.problems).toEqual([
      'default/units: scheduled ceiling 9,500 per 24h is exceeded by 4,324 (schedules spend up to 13,824)',
    ]);
    const r = await cli('plan', '--config', `${FIXTURES}/overspends.yaml`);
    expect(r.code).toBe(65);
    expect(r.stdout).toContain('NO, over by 4,324');
    expect(r.stdout).toContain('DOES NOT FIT (1)');
  });

  it('a narrower search budget overspends on its own while every bucket has room', async () => {
    const report = planBudget(loadConfig({ file: `${FIXTURES}/search-budget.yaml`, env: {} }), { now: NOW });
    expect(report.fits).toBe(false);
    const search = bucket(report, 'default', 'search.list');
    expect(search.checks.map((k) => [k.name, k.limit, k.demand, k.fits])).toEqual([
      ['manual room', 100, 60, true],
      ['budget manual-search', 40, 60, false],
    ]);
    expect(search.checks[1]!.fixes[0]).toBe('make at most 40 search.list calls a day for editors (now 60)');
    expect(bucket(report, 'default', 'units').fits).toBe(true);
    expect(report.problems).toHaveLength(1);
    const r = await cli('plan', '--json', '--config', `${FIXTURES}/search-budget.yaml`);
    expect(r.code).toBe(65);
    const json = JSON.parse(r.stdout) as PlanReport;
    expect(json.fits).toBe(false);
    expect(json.problems[0]).toContain('budget manual-search 40 per 24h is exceeded by 20');
  });
});

/** The raw config with a plan's change to the trending schedule applied. */
function applyChange(raw: Record<string, unknown>, change: PlanChange): Record<string, unknown> {
  const schedules = (raw['schedules'] ?? {}) as Record<string, Record<string, unknown>>;
  const trending = { ...schedules['trending'] };
  if (change.cron !== undefined) trending['cron'] = change.cron;
  if (change.maxPages !== undefined) trending['maxPages'] = change.maxPages;
  const regions = ((raw['regions'] as string[] | undefined) ?? [...DEFAULT_REGIONS]).filter(
    (r) => !change.moveRegions?.includes(r),
  );
  const categories = Object.fromEntries(
    Object.entries((raw['categories'] ?? {}) as Record<string, unknown>).filter(([r]) => regions.includes(r)),
  );
  return { ...raw, regions, categories, schedules: { ...schedules, trending } };
}

describe('plan advice, applied, makes the schedule fit', () => {
  const NOW = at('2026-01-12T00:00:00Z');
  // Each case: the raw config and the kinds of change offered (a pace the bursts of one run
  // overspend cannot be fixed by running less often).
  const cases: Array<[string, Record<string, unknown>, Array<keyof PlanChange>]> = [
    [
      'the overspending fixture',
      parse(readFileSync(`${FIXTURES}/overspends.yaml`, 'utf8')) as Record<string, unknown>,
      ['cron', 'maxPages', 'moveRegions'],
    ],
    [
      'a classic bucket whose backfill headroom is too small for trending',
      {
        credentials: [{ id: 'c', profile: 'youtube-classic', backfillHeadroom: 500 }],
        schedules: { trending: { cron: '*/30 * * * *' } },
      },
      ['cron', 'maxPages', 'moveRegions'],
    ],
    [
      'a pace the regional bursts overspend',
      {
        credentials: [{ id: 'c', buckets: { units: { pace: { limit: 20, window: '10m' } } } }],
        regions: ['US', 'GB', 'DE', 'FR', 'IN', 'BR', 'AU', 'CA', 'JP', 'KR'],
        categories: { US: ['10', '20', '24'] },
        schedules: { trending: { cron: '*/5 * * * *', stagger: '0s' } },
      },
      ['moveRegions'],
    ],
  ];
  it.each(cases)('%s', (_, raw, kinds) => {
    const report = planBudget(parseConfig(raw, { env: {} }), { now: NOW });
    expect(report.fits).toBe(false);
    const changes = report.buckets.flatMap((b) => b.changes);
    // Fewer runs, fewer pages, fewer regions: each offered at most once, and each fits when applied.
    expect(changes.map((c) => (Object.keys(c) as Array<keyof PlanChange>).find((k) => k !== 'text'))).toEqual(
      kinds,
    );
    for (const change of changes) {
      const again = planBudget(parseConfig(applyChange(raw, change), { env: {} }), { now: NOW });
      expect({ change: change.text, problems: again.problems }).toEqual({
        change: change.text,
        problems: [],
      });
      // Every failing check lists it.
      for (const b of report.buckets)
        for (const k of b.checks.filter((x) => !x.fits)) expect(k.fixes).toContain(change.text);
    }
  });
});

describe('plan details', () => {
  it('counts expected calls once per upstream day, whatever the window', () => {
    const raw = (window: string) => ({
      credentials: [{ id: 'c', window }],
      expected: [{ method: 'channels.update', callsPerDay: 100 }],
    });
    for (const window of ['upstream-day', '24h']) {
      const units = bucket(planBudget(parseConfig(raw(window), { env: {} })), 'c', 'units');
      // 100 calls a day × 50 units.
      expect(units.lines.find((l) => l.source === 'expected')).toMatchObject({ units: 5_000 });
      expect(units.checks.find((k) => k.kind === 'manual')).toMatchObject({ demand: 5_000, fits: true });
    }
    // A 48 h sliding window holds two days of them.
    const two = bucket(planBudget(parseConfig(raw('48h'), { env: {} })), 'c', 'units');
    expect(two.lines.find((l) => l.source === 'expected')).toMatchObject({ units: 10_000 });
  });

  it('warns about a budget that covers nothing its tiers spend, naming it', async () => {
    const raw = {
      budgets: [
        // Under youtube-2026 the backfill spends videos.batchGetStats, not units.
        { id: 'backfill-hourly', bucket: 'units', tiers: ['backfill'], limit: 3, window: '1h' },
        { id: 'stats-hourly', bucket: 'videos.batchGetStats', tiers: ['backfill'], limit: 3, window: '1h' },
        { id: 'manual-search', methods: ['search.list'], tiers: ['manual'], limit: 40, window: '24h' },
      ],
    };
    const report = planBudget(parseConfig(raw, { env: {} }));
    expect(report.warnings).toHaveLength(1);
    expect(report.warnings[0]).toMatch(/^budget backfill-hourly covers bucket units for backfill/);
    expect(report.warnings[0]).toContain('the backfill tier spends videos.batchGetStats');
    // The same budget does limit the backfill under youtube-classic, where it spends units.
    const classic = planBudget(
      parseConfig(
        { credentials: [{ id: 'c', profile: 'youtube-classic' }], budgets: [raw.budgets[0]] },
        { env: {} },
      ),
    );
    expect(classic.warnings).toEqual([]);
    expect(bucket(classic, 'c', 'units').lines.find((l) => l.source === 'backfill')?.detail).toContain(
      'capped by budget backfill-hourly',
    );
  });

  it('the budgets documented in config/default.yaml limit something under the default profile', () => {
    const text = readFileSync('config/default.yaml', 'utf8');
    const examples = [...text.matchAll(/^#\s+- (\{ id: .*\})$/gm)].map((m) => parse(m[1]!) as object);
    expect(examples.length).toBeGreaterThanOrEqual(2);
    const report = planBudget(parseConfig({ budgets: examples }, { env: {} }));
    expect(report.warnings).toEqual([]);
  });

  it('counts the runs of the longest upstream day for an upstream-day window', () => {
    const config = parseConfig(
      {
        credentials: [{ id: 'c', window: 'upstream-day' }],
        schedules: { trending: { cron: '0 * * * *', timeZone: 'America/Los_Angeles' } },
      },
      { env: {} },
    );
    // The week from 2026-10-28 holds the 25 h day of 2026-11-01 in Los Angeles.
    const fall = bucket(planBudget(config, { now: at('2026-10-28T00:00:00Z') }), 'c', 'units');
    expect(fall.lines[0]).toMatchObject({ units: 8 * 4 * 25, runs: 25 });
    const plain = bucket(planBudget(config, { now: at('2026-01-12T00:00:00Z') }), 'c', 'units');
    expect(plain.lines[0]).toMatchObject({ units: 8 * 4 * 24, runs: 24 });
  });

  it('checks a pace against the staggered regional bursts', () => {
    const raw = (stagger: string) => ({
      credentials: [{ id: 'c', buckets: { units: { pace: { limit: 100, window: '10m' } } } }],
      schedules: { trending: { cron: '0 * * * *', stagger } },
    });
    // 8 regions × 4 pages = 32 units an hour; 2 minutes apart, 5 regions (20 units) fall in 10 minutes.
    const spread = bucket(planBudget(parseConfig(raw('2m'), { env: {} })), 'c', 'units');
    expect(spread.checks.find((k) => k.kind === 'pace')).toMatchObject({ demand: 20, fits: true });
    const tight = parseConfig(
      {
        ...raw('0s'),
        credentials: [{ id: 'c', buckets: { units: { pace: { limit: 20, window: '10m' } } } }],
      },
      { env: {} },
    );
    const pace = bucket(planBudget(tight), 'c', 'units').checks.find((k) => k.kind === 'pace')!;
    expect(pace).toMatchObject({ demand: 32, fits: false, over: 12 });
    expect(pace.fixes.join('\n')).toContain('stagger');
  });

  it('warns when the backfill can take the units the scheduled jobs need', () => {
    const config = parseConfig(
      {
        credentials: [{ id: 'c', profile: 'youtube-classic', backfillHeadroom: 500 }],
        schedules: { trending: { cron: '*/30 * * * *' } },
      },
      { env: {} },
    );
    const units = bucket(planBudget(config), 'c', 'units');
    // 8 × 4 × 48 = 1,536 fits under 9,500, but only 500 are left above the backfill's line.
    expect(units.checks.map((k) => [k.kind, k.fits])).toEqual([
      ['ceiling', true],
      ['headroom', false],
    ]);
    expect(units.checks[1]!.fixes.join('\n')).toContain('raise backfillHeadroom of units to at least 1,536');
  });

  it('rejects an expected spend on an unknown method or credential with its path', () => {
    expect(() => parseConfig({ expected: [{ method: 'videos.fly', callsPerDay: 1 }] }, { env: {} })).toThrow(
      /expected\[0\]\.method: unknown method 'videos\.fly'/,
    );
    expect(() =>
      parseConfig({ expected: [{ method: 'search.list', callsPerDay: 1, credential: 'x' }] }, { env: {} }),
    ).toThrow(/expected\[0\]\.credential: unknown credential 'x'/);
  });
});
