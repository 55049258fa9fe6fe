/**
 * Every mistake of a config in one pass: the schema's and the checks that need a valid schema
 * (time zone, region, cron expression, a budget's bucket, a method in `expected`) together, each
 * with its path, what was expected and the nearest known name, and no line that only another
 * mistake caused. A core-only config reads with no application key at all.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { PACKAGED_PART_KEYS } from '../../src/config/parts.js';
import { ConfigError } from '../../src/errors.js';
import { parseYouTubeConfig, youtubeConfigPart } from '../../src/youtube/config/part.js';
import { YOUTUBE_KEYS } from '../../src/youtube/config/resolver.js';
import { cli, configFile } from '../cli/helpers.js';

/** The problem lines of a config that must not parse. */
function problems(parse: () => unknown): string[] {
  try {
    parse();
  } catch (e) {
    if (e instanceof ConfigError) return [...e.problems];
    throw e;
  }
  throw new Error('the config parsed');
}

/** Twelve mistakes, none caused by another; each line's path and what it must say. */
const TWELVE: Array<[string, RegExp]> = [
  ['regoins', /^regoins: unknown key \(did you mean 'regions'\?\)$/],
  ['credentials[0].buckets.units.reserve', /: must be a number of units >= 0 or a percentage/],
  ['storeDown.openMaxCost', /: must be a number$/],
  ['budgets[0].tiers[0]', /: must be one of scheduled, backfill, manual, got 'nightly'$/],
  ['schedules.backfill.stagger', /: must be a duration such as 30s/],
  ['storeDown.default', /: must be one of auto, open, closed, got 'sometimes'$/],
  [
    'credentials[0].timeZone',
    /: unknown time zone 'America\/Los_Angles' \(did you mean 'America\/Los_Angeles'\?\)$/,
  ],
  ['regions[1]', /: 'ZZ' is not an ISO 3166-1 region code$/],
  ['schedules.trending.cron', /: '61 \* \* \* \*': the minute field '61' is out of range/],
  ['budgets[1].bucket', /: unknown bucket 'unitz' \(did you mean 'units'\?\) \(profile youtube-2026 has /],
  [
    'expected[0].method',
    /: unknown method 'video.list' in profile youtube-2026 \(did you mean 'videos.list'\?\)$/,
  ],
  ['credentials[1].profile', /: unknown profile 'youtube-2027' \(did you mean 'youtube-2026'\?\)/],
];

const RAW = {
  regoins: ['US'],
  regions: ['US', 'ZZ'],
  credentials: [
    { id: 'a', timeZone: 'America/Los_Angles', buckets: { units: { reserve: -5 } } },
    { id: 'b', profile: 'youtube-2027' },
  ],
  budgets: [
    { id: 'nightly', bucket: 'units', tiers: ['nightly'], limit: 100, window: '1h' },
    { id: 'typo', credential: 'a', bucket: 'unitz', limit: 100, window: '1h' },
    // Names credential b, whose profile is unknown: nothing more is said of it.
    { id: 'of-b', credential: 'b', bucket: 'units', limit: 100, window: '1h' },
  ],
  expected: [
    { credential: 'a', method: 'video.list', callsPerDay: 10 },
    { credential: 'b', method: 'videos.list', callsPerDay: 10 },
  ],
  schedules: { trending: { cron: '61 * * * *' }, backfill: { stagger: '5 minutes' } },
  storeDown: { default: 'sometimes', openMaxCost: 'lots' },
};

describe('a config with twelve independent mistakes', () => {
  it('reports all twelve in one pass, each once, and nothing else', () => {
    const lines = problems(() => parseYouTubeConfig(RAW, { env: {} }));
    expect(lines, lines.join('\n')).toHaveLength(TWELVE.length);
    for (const [path, says] of TWELVE) {
      const mine = lines.filter((l) => l.startsWith(`${path}:`));
      expect(mine, `${path} in:\n${lines.join('\n')}`).toHaveLength(1);
      expect(mine[0]).toMatch(says);
    }
    expect(lines.join('\n')).not.toMatch(/undefined/);
  });

  it('the command says the same twelve lines, exit 78, from the file', async () => {
    const file = configFile(JSON.stringify(RAW));
    const out = await cli('plan', '--config', file);
    expect(out.code).toBe(78);
    const lines = out.stderr.trimEnd().split('\n');
    expect(lines, out.stderr).toHaveLength(TWELVE.length);
    for (const [path, says] of TWELVE) {
      const mine = lines.filter((l) => l.startsWith(`quota-guard: ${file}: ${path}:`));
      expect(mine, path).toHaveLength(1);
      expect(mine[0]!.replace(/ \(QG_[A-Z_]+\)$/, '').replace(`quota-guard: ${file}: `, '')).toMatch(says);
    }
  });

  it('fixing one mistake takes exactly its line away', () => {
    const fixed = { ...RAW, storeDown: { default: 'auto', openMaxCost: 'lots' } };
    const lines = problems(() => parseYouTubeConfig(fixed, { env: {} }));
    expect(lines).toHaveLength(TWELVE.length - 1);
    expect(lines.some((l) => l.startsWith('storeDown.default'))).toBe(false);
  });

  it('a refused list element keeps the others at their own index, and its name known', () => {
    const lines = problems(() =>
      parseYouTubeConfig(
        {
          credentials: [
            { id: 'a', apiKeyEnv: 'lower case' },
            { id: 'b', timeZone: 'Nowhere/Else' },
          ],
          budgets: [{ id: 'x', credential: 'a', bucket: 'units', limit: 1, window: '1h' }],
        },
        { env: {} },
      ),
    );
    expect(lines).toEqual([
      'credentials[0].apiKeyEnv: must be an environment variable name',
      "credentials[1].timeZone: unknown time zone 'Nowhere/Else'",
    ]);
  });

  it('an unknown profile hides nothing of the credential list and adds no line of its own', () => {
    const lines = problems(() =>
      parseYouTubeConfig(
        {
          credentials: [{ id: 'x', profile: 'nope-profile' }],
          expected: [{ method: 'videos.list', callsPerDay: 1 }],
          budgets: [{ id: 'b', bucket: 'units', limit: 1, window: '1h' }],
          backfill: { pace: 'b' },
        },
        { env: {} },
      ),
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^credentials\[0\]\.profile: unknown profile 'nope-profile'/);
  });
});

describe('the core reads its own keys', () => {
  const drive = {
    profiles: {
      'drive-v3': {
        timeZone: 'America/Los_Angeles',
        defaultBucket: 'queries',
        buckets: { queries: { quota: 12_000 } },
        methods: { 'files.list': { bucket: 'queries', cost: 1 } },
      },
    },
    credentials: [{ id: 'drive', profile: 'drive-v3', window: '1m' }],
    store: 'sqlite::memory:',
  };

  it('a core-only config needs none of the application keys, and has none of its settings', () => {
    const config = parseConfig(drive, { env: {}, parts: [] });
    expect(config.parts).toEqual([]);
    expect(config.credential('drive').buckets['queries']?.quota).toBe(12_000);
    expect(Object.keys(config)).not.toContain('regions');
    expect(Object.keys(config)).not.toContain('schedules');
  });

  it("the core alone leaves the application's keys to it: a file written for both still reads", () => {
    const config = parseConfig({ ...drive, regions: ['ZZ'], cache: { nope: 1 } }, { env: {}, parts: [] });
    expect(Object.keys(config)).not.toContain('regions');
    // A key no part owns is still unknown, with the nearest known one.
    expect(problems(() => parseConfig({ ...drive, credentails: [] }, { env: {}, parts: [] }))).toEqual([
      "credentails: unknown key (did you mean 'credentials'?)",
    ]);
  });

  it("the core's list of the application's keys is the application's own", () => {
    expect([...PACKAGED_PART_KEYS['youtube']!].sort()).toEqual([...YOUTUBE_KEYS].sort());
    expect(Object.keys(youtubeConfigPart.shape).sort()).toEqual([...YOUTUBE_KEYS].sort());
  });

  it('with the application part, an empty region list is a config without a trending job', () => {
    const config = parseYouTubeConfig({ ...drive, regions: [] }, { env: {} });
    expect(config.parts).toEqual(['youtube']);
    expect(config.regions).toEqual([]);
    expect(config.schedules.trending.maxPages).toBe(4);
  });

  it('the same file means the same with and without the application part, in the core settings', () => {
    const core = parseConfig(drive, { env: {}, parts: [] });
    const both = parseYouTubeConfig(drive, { env: {} });
    for (const key of ['store', 'credentials', 'expected', 'maxSleepMs', 'storeDown'] as const) {
      expect(JSON.parse(JSON.stringify(both[key]))).toEqual(JSON.parse(JSON.stringify(core[key])));
    }
  });
});
