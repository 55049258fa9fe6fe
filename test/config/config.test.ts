import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateDetailed } from 'node-cron';
import { describe, expect, it } from 'vitest';
import { ConfigError, exitCodeFor } from '../../src/errors.js';
import {
  loadYouTubeConfig as loadConfig,
  parseYouTubeConfig as parseConfig,
} from '../../src/youtube/config/part.js';
import { DEFAULT_BACKFILL_CRON, DEFAULT_TRENDING_CRON } from '../../src/youtube/defaults.js';

const dir = mkdtempSync(join(tmpdir(), 'qg-config-'));
let n = 0;
function file(text: string): string {
  const p = join(dir, `c${n++}.yaml`);
  writeFileSync(p, text);
  return p;
}

function problemsOf(fn: () => unknown): { code: string; problems: readonly string[]; exit: number } {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    const c = e as ConfigError;
    return { code: c.code, problems: c.problems, exit: exitCodeFor(e) };
  }
  throw new Error('expected a ConfigError');
}

describe('defaults', () => {
  it('config/default.yaml resolves to exactly the embedded defaults', () => {
    const fromFile = loadConfig({ file: 'config/default.yaml', env: {} });
    const embedded = loadConfig({ env: {} });
    expect({ ...fromFile, source: undefined }).toEqual({ ...embedded, source: undefined });
    expect(fromFile.source).toBe('config/default.yaml');
  });

  it('has one credential with the youtube-2026 buckets, 5 % reserve and 8 regions', () => {
    const c = parseConfig({}, { env: {} });
    expect(c.credentials.map((x) => x.id)).toEqual(['default']);
    const cred = c.credential('default');
    expect(cred.apiKeyEnv).toBe('YOUTUBE_API_KEY');
    expect(cred.timeZone).toBe('America/Los_Angeles');
    expect(Object.keys(cred.buckets).sort()).toEqual([
      'search.list',
      'units',
      'videos.batchGetStats',
      'videos.insert',
    ]);
    const units = cred.buckets['units']!;
    expect(units).toMatchObject({ quota: 10_000, reserve: 500, window: { kind: 'sliding', ms: 86_400_000 } });
    expect(units.ceilings).toEqual({ scheduled: 9_500, backfill: 8_500, manual: 10_000 });
    expect(cred.buckets['search.list']!.ceilings.scheduled).toBe(95);
    expect(cred.methods['captions.insert']).toEqual({ bucket: 'units', cost: 400 });
    expect(c.regions).toEqual(['US', 'GB', 'DE', 'FR', 'IN', 'BR', 'AU', 'CA']);
    expect(c.categories['US']).toEqual([]);
    expect(c.maxSleepMs).toBe(30_000);
    expect(c.storeDown).toEqual({ default: 'auto', openMaxCost: 1, sites: {} });
    expect(c.store).toMatchObject({
      url: `sqlite:${join(homedir(), '.local/share/quota-guard/quota.db')}`,
      kind: 'sqlite',
      from: 'default',
    });
    expect(c.cache.path).toBe(join(homedir(), '.local/share/quota-guard/cache.db'));
    expect(c.upstream.baseUrl).toBe('https://www.googleapis.com/youtube/v3');
  });

  it('classic profile puts search.list in units at 100', () => {
    const c = parseConfig({ credentials: [{ id: 'old', profile: 'youtube-classic' }] }, { env: {} });
    expect(Object.keys(c.credential('old').buckets)).toEqual(['units']);
    expect(c.credential('old').methods['search.list']).toEqual({ bucket: 'units', cost: 100 });
  });
});

describe('overrides and budgets', () => {
  it('applies bucket overrides, percentages and durations', () => {
    const c = parseConfig(
      {
        credentials: [
          {
            id: 'big',
            reserve: 10,
            window: '12h',
            buckets: {
              units: {
                quota: 50_000,
                reserve: '2%',
                backfillHeadroom: 4000,
                pace: { limit: 1500, window: '1h' },
              },
            },
          },
        ],
        maxSleep: '45s',
        schedules: { trending: { cron: '*/15 * * * *', stagger: '90s' } },
      },
      { env: {} },
    );
    const cred = c.credential('big');
    expect(cred.buckets['units']).toMatchObject({
      quota: 50_000,
      reserve: 1000,
      backfillHeadroom: 4000,
      window: { kind: 'sliding', ms: 12 * 3_600_000 },
      pace: { limit: 1500, windowMs: 3_600_000 },
      ceilings: { scheduled: 49_000, backfill: 45_000, manual: 50_000 },
    });
    // Credential-level reserve applies to buckets without their own.
    expect(cred.buckets['search.list']!.reserve).toBe(10);
    expect(cred.buckets['search.list']!.window).toEqual({ kind: 'sliding', ms: 12 * 3_600_000 });
    expect(c.maxSleepMs).toBe(45_000);
    expect(c.schedules.trending).toEqual({
      cron: '*/15 * * * *',
      staggerMs: 90_000,
      timeZone: 'UTC',
      maxPages: 4,
    });
  });

  it('attaches narrower budgets to credentials and infers the bucket from methods', () => {
    const c = parseConfig(
      {
        credentials: [{ id: 'a' }, { id: 'b', profile: 'youtube-classic' }],
        budgets: [
          { id: 'backfill-hourly', bucket: 'units', tiers: ['backfill'], limit: 2000, window: '1h' },
          {
            id: 'manual-search',
            credential: 'a',
            methods: ['search.list'],
            tiers: ['manual'],
            limit: 40,
            window: '24h',
          },
        ],
      },
      { env: {} },
    );
    expect(c.credential('a').budgets).toEqual([
      { id: 'backfill-hourly', bucket: 'units', limit: 2000, windowMs: 3_600_000, tiers: ['backfill'] },
      {
        id: 'manual-search',
        bucket: 'search.list',
        limit: 40,
        windowMs: 86_400_000,
        tiers: ['manual'],
        methods: ['search.list'],
      },
    ]);
    expect(c.credential('b').budgets.map((b) => b.id)).toEqual(['backfill-hourly']);
  });

  it('takes the store from the file, else REDIS_URL, else the SQLite default', () => {
    expect(
      parseConfig({ store: 'redis://127.0.0.1:1' }, { env: { REDIS_URL: 'redis://x:2' } }).store,
    ).toMatchObject({
      url: 'redis://127.0.0.1:1',
      kind: 'redis',
      from: 'file',
    });
    expect(parseConfig({}, { env: { REDIS_URL: 'redis-cluster://a:1,b:2' } }).store).toMatchObject({
      kind: 'redis-cluster',
      from: 'env',
    });
    expect(
      parseConfig(
        { store: { url: 'sqlite:/tmp/x.db', keyPrefix: 'p:', commandTimeoutMs: '2s' } },
        { env: {} },
      ).store,
    ).toEqual({
      url: 'sqlite:/tmp/x.db',
      kind: 'sqlite',
      from: 'file',
      keyPrefix: 'p:',
      commandTimeoutMs: 2000,
    });
  });

  it('reads QUOTA_GUARD_CONFIG when no file is given, and --config wins over it', () => {
    const a = file('regions: [US]\n');
    const b = file('regions: [GB]\n');
    expect(loadConfig({ env: { QUOTA_GUARD_CONFIG: a } }).regions).toEqual(['US']);
    expect(loadConfig({ file: b, env: { QUOTA_GUARD_CONFIG: a } }).regions).toEqual(['GB']);
  });
});

describe('problems: one line each, with its path, exit 78', () => {
  it('reports reserve >= quota at the path where it was set', () => {
    const p = problemsOf(() =>
      loadConfig({ file: file('credentials:\n  - id: a\n    reserve: 20000\n'), env: {} }),
    );
    expect(p.exit).toBe(78);
    expect(p.code).toBe('QG_CONFIG_INVALID');
    expect(p.problems).toContainEqual(
      expect.stringContaining(
        "credentials[0].reserve: 20000 must be less than the quota of bucket 'units' (10000)",
      ),
    );
    // Every bucket whose quota is below it is reported, each once.
    expect(new Set(p.problems).size).toBe(p.problems.length);
  });

  it('reports every shape problem at once', () => {
    const p = problemsOf(() =>
      parseConfig(
        {
          credentials: [{ id: 'a', buckets: { units: { window: 'soon' } } }],
          maxSleep: -1,
          regions: ['USA'],
          bogus: 1,
        },
        { env: {} },
      ),
    );
    expect(p.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^credentials\[0\]\.buckets\.units\.window: must be 'sliding', 'upstream-day' or a duration/,
        ),
        expect.stringMatching(/^maxSleep: must be a duration/),
        'regions[0]: must be a two-letter region code (ISO 3166-1)',
        expect.stringMatching(/^bogus: unknown key \(expected store, profiles, credentials, .*, backfill\)$/),
      ]),
    );
  });

  it('uses the unknown-name codes', () => {
    expect(
      problemsOf(() => parseConfig({ credentials: [{ id: 'a', buckets: { nope: {} } }] }, { env: {} })),
    ).toMatchObject({ code: 'QG_UNKNOWN_BUCKET', exit: 78 });
    expect(
      problemsOf(() =>
        parseConfig({ budgets: [{ id: 'x', methods: ['videos.fly'], limit: 1, window: '1h' }] }, { env: {} }),
      ),
    ).toMatchObject({
      code: 'QG_UNKNOWN_METHOD',
      problems: ["budgets[0].methods[0]: unknown method 'videos.fly' in profile youtube-2026"],
    });
    expect(
      problemsOf(() =>
        parseConfig(
          { budgets: [{ id: 'x', credential: 'z', bucket: 'units', limit: 1, window: '1h' }] },
          { env: {} },
        ),
      ),
    ).toMatchObject({ code: 'QG_UNKNOWN_CREDENTIAL' });
    expect(problemsOf(() => parseConfig({ categories: { ZZ: ['10'] } }, { env: {} }))).toMatchObject({
      code: 'QG_UNKNOWN_REGION',
    });
    expect(problemsOf(() => parseConfig({ store: 'mysql://u:hunter2@db' }, { env: {} }))).toMatchObject({
      code: 'QG_STORE_URL_INVALID',
    });
  });

  it('never echoes a store password', () => {
    const p = problemsOf(() => parseConfig({}, { env: { REDIS_URL: 'redsi://user:hunter2@db:6379' } }));
    expect(p.problems.join('\n')).not.toContain('hunter2');
    expect(p.problems[0]).toMatch(/^REDIS_URL: /);
  });

  it('rejects headroom that leaves nothing for the backfill, and mismatched budget methods', () => {
    const p = problemsOf(() =>
      parseConfig(
        {
          credentials: [{ id: 'a', buckets: { units: { reserve: 500, backfillHeadroom: 9500 } } }],
          budgets: [{ id: 'x', bucket: 'units', methods: ['search.list'], limit: 5, window: '1h' }],
        },
        { env: {} },
      ),
    );
    expect(p.problems).toEqual([
      'credentials[0].buckets.units.backfillHeadroom: must be less than quota − reserve (9500)',
      "budgets[0].methods[0]: 'search.list' spends bucket 'search.list' in profile youtube-2026, not 'units'",
    ]);
  });

  it('rejects bad cron, time zones, duplicates', () => {
    const p = problemsOf(() =>
      parseConfig(
        {
          credentials: [{ id: 'a', timeZone: 'Mars/Base' }, { id: 'a' }],
          schedules: { trending: { cron: '61 * * * *' }, backfill: { timeZone: 'Nowhere' } },
        },
        { env: {} },
      ),
    );
    expect(p.problems).toEqual(
      expect.arrayContaining([
        "credentials[0].timeZone: unknown time zone 'Mars/Base'",
        "credentials[1].id: duplicate credential 'a'",
        expect.stringMatching(/^schedules\.trending\.cron: '61 \* \* \* \*': /),
        "schedules.backfill.timeZone: unknown time zone 'Nowhere'",
      ]),
    );
  });

  it('the built-in schedules, which the config does not check again, are cron expressions node-cron accepts', () => {
    for (const cron of [DEFAULT_TRENDING_CRON, DEFAULT_BACKFILL_CRON]) {
      expect(validateDetailed(cron), cron).toMatchObject({ valid: true, errors: [] });
    }
    const c = parseConfig({}, { env: {} });
    expect([c.schedules.trending.cron, c.schedules.backfill.cron]).toEqual([
      DEFAULT_TRENDING_CRON,
      DEFAULT_BACKFILL_CRON,
    ]);
  });

  it('names the file and position of a syntax error, and a missing file', () => {
    const bad = file('credentials:\n  - id: a\n   reserve: [\n');
    const p = problemsOf(() => loadConfig({ file: bad, env: {} }));
    expect(p.problems).toHaveLength(1);
    expect(p.problems[0]).toMatch(
      new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: not valid YAML or JSON`),
    );
    const missing = problemsOf(() => loadConfig({ file: join(dir, 'nope.yaml'), env: {} }));
    expect(missing.problems).toEqual([`${join(dir, 'nope.yaml')}: config file not found`]);
    expect(missing.exit).toBe(78);
  });

  it('prefixes each problem with the file it came from', () => {
    const f = file('maxSleep: never\n');
    expect(problemsOf(() => loadConfig({ file: f, env: {} })).problems[0]).toMatch(
      /^.*c\d+\.yaml: maxSleep: /,
    );
  });
});

describe('lookups', () => {
  const c = parseConfig(
    { credentials: [{ id: 'a', apiKeyEnv: 'A_KEY' }] },
    { env: { A_KEY: '  sekret-value ' } },
  );

  it('finds credentials and regions, failing with the unknown-name codes', () => {
    expect(c.credential('a').id).toBe('a');
    expect(problemsOf(() => c.credential('zz'))).toMatchObject({
      code: 'QG_UNKNOWN_CREDENTIAL',
      exit: 78,
      problems: ["unknown credential 'zz' (configured: a)"],
    });
    expect(c.region('us')).toBe('US');
    expect(problemsOf(() => c.region('XX'))).toMatchObject({ code: 'QG_UNKNOWN_REGION', exit: 78 });
  });

  it('reads API keys lazily and never keeps them in the config data', () => {
    expect(c.apiKey('a')).toBe('sekret-value');
    expect(JSON.stringify(c)).not.toContain('sekret');
    const none = parseConfig({}, { env: {} });
    const p = problemsOf(() => none.apiKey('default'));
    expect(p).toMatchObject({ code: 'QG_MISSING_API_KEY', exit: 78 });
    expect(p.problems[0]).toContain('YOUTUBE_API_KEY');
  });
});

describe('example files', () => {
  it.each(
    readdirSync('config/examples').filter((f) => f.endsWith('.yaml')),
  )('config/examples/%s loads', (name) => {
    const c = loadConfig({ file: join('config/examples', name), env: {} });
    expect(c.credentials.length).toBeGreaterThan(0);
  });

  it('the upstream-day example windows every bucket by the upstream day with a pace on units', () => {
    const c = loadConfig({ file: 'config/examples/upstream-day.yaml', env: {} }).credential('default');
    expect(Object.values(c.buckets).every((b) => b.window.kind === 'upstream-day')).toBe(true);
    expect(c.buckets['units']!.pace).toEqual({ limit: 1500, windowMs: 3_600_000 });
  });
});
