import { describe, expect, inject, it } from 'vitest';
import { createGuard } from '../../src/guard/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { parseYouTubeConfig as parseConfig } from '../../src/youtube/config/part.js';
import { cli, configFile, sqliteStore } from './helpers.js';

const quiet = { info() {}, warn() {} };

function smallConfig(store: string, keyPrefix?: string): string {
  return [
    `store: ${keyPrefix ? `{ url: "${store}", keyPrefix: "${keyPrefix}" }` : `"${store}"`}`,
    'credentials:',
    '  - id: main',
    '    buckets:',
    '      units: { quota: 100, reserve: 10, backfillHeadroom: 20 }',
    '',
  ].join('\n');
}

const STORES = [
  { name: 'sqlite', make: () => smallConfig(sqliteStore()) },
  {
    name: 'redis',
    make: () =>
      smallConfig(inject('redisUrl'), `${inject('keyPrefix')}cli${Math.random().toString(36).slice(2)}:`),
  },
];

describe.each(STORES)('spend and status on $name', ({ make }) => {
  it('spend exits 0 when allowed and 75 with a Retry-After when denied; status reports it', async () => {
    const cfg = configFile(make());
    const a = await cli(
      'spend',
      'main',
      '--cost',
      '60',
      '--tier',
      'scheduled',
      '--tag',
      'trending:US:videos.list',
      '--config',
      cfg,
    );
    expect(a).toMatchObject({ code: 0, stderr: '' });
    expect(a.stdout).toMatch(
      /^allowed: 60 units of main\/units \(scheduled\); 30 left under the scheduled ceiling \(90\)\n$/,
    );
    const b = await cli(
      'spend',
      'main',
      '--cost',
      '25',
      '--tier',
      'manual',
      '--tag',
      'backfill:GB:videos.list',
      '--config',
      cfg,
    );
    expect(b.code).toBe(0); // manual: ceiling 100
    const denied = await cli('spend', 'main', '--cost', '20', '--tier', 'scheduled', '--config', cfg);
    expect(denied.code).toBe(75);
    expect(denied.stdout).toMatch(
      /^denied: 20 units of main\/units \(scheduled\): 5 left under the scheduled ceiling \(90\); retry in /,
    );
    const retryAfter = Number(/\nRetry-After: (\d+)\n$/.exec(denied.stdout)?.[1]);
    expect(retryAfter).toBeGreaterThan(86_000);
    expect(retryAfter).toBeLessThanOrEqual(86_400);

    const s = await cli('status', '--json', '--config', cfg);
    expect(s.code).toBe(0);
    const report = JSON.parse(s.stdout);
    expect(report.credentials).toHaveLength(1);
    const cred = report.credentials[0];
    expect(cred).toMatchObject({ id: 'main', blockedUntil: null });
    const units = cred.buckets.find((b: { id: string }) => b.id === 'units');
    expect(units).toMatchObject({
      id: 'units',
      quota: 100,
      used: 85,
      remaining: { scheduled: 5, backfill: 0, manual: 15 },
      byTag: { 'trending:US:videos.list': 60, 'backfill:GB:videos.list': 25 },
      byRegion: { US: 60, GB: 25 },
      byMethod: { 'videos.list': 85 },
    });
    // The next 1 and 50 units free up when the first (60-unit) entry ages out; 100 needs both.
    expect(units.freesUpInMs['1']).toBeGreaterThan(86_000_000);
    expect(units.freesUpInMs['1']).toBe(units.freesUpInMs['50']);
    expect(units.freesUpInMs['100']).toBeGreaterThanOrEqual(units.freesUpInMs['50']);

    const text = await cli('status', '--config', cfg);
    expect(text.code).toBe(0);
    // 100 units never fit under a scheduled ceiling of 90: next 100 says so (-).
    expect(text.stdout).toMatch(/\n {2}units +85 +100 +10 +5 +0 +15 +-\n/);
    // The 1 and 50 units free when the first (60-unit) spend ages out, 100 needs both.
    expect(text.stdout).toMatch(
      /\n {2}units: 1d sliding window: as the oldest spends age out, the next 1(, 50 and 100| and 50) units free up in /,
    );
    expect(text.stdout).toContain('\n    by region: US 60, GB 25\n');
    expect(text.stdout).toContain('\n    by method: videos.list 85\n');
    expect(text.stdout).toContain('\n    by site: trending 60, backfill 25\n');
    expect(text.stdout).not.toContain('█'); // no bars when not on a terminal
  });

  it('status shows a block and why', async () => {
    const file = configFile(make());
    const cfg = parseConfig(
      (await import('yaml')).parse((await import('node:fs')).readFileSync(file, 'utf8')),
      { env: {} },
    );
    const ledger = await openLedger(
      cfg.store.url,
      cfg.store.keyPrefix ? { keyPrefix: cfg.store.keyPrefix } : {},
    );
    try {
      const guard = createGuard({ config: cfg, ledger, logger: quiet });
      const until = Date.now() + 3_600_000;
      await guard.block('main', 'units', 'upstream answered quotaExceeded', until);
      const s = JSON.parse((await cli('status', '--json', '--config', file)).stdout);
      expect(s.credentials[0].blockedUntil).toBe(new Date(until).toISOString());
      const units = s.credentials[0].buckets.find((b: { id: string }) => b.id === 'units');
      expect(units).toMatchObject({
        blockedReason: 'upstream answered quotaExceeded',
        remaining: { scheduled: 0, manual: 0 },
      });
      const other = s.credentials[0].buckets.find((b: { id: string }) => b.id === 'search.list');
      expect(other.blockedUntil).toBeNull();
      expect((await cli('status', '--config', file)).stdout).toMatch(
        /\n {2}units: .*\n {4}BLOCKED until \d\d:\d\d:\d\d [^,]+, in (59m \d+s|1h): upstream answered quotaExceeded\n/,
      );
      const denied = await cli('spend', 'main', '--cost', '1', '--config', file);
      expect(denied.code).toBe(75);
      expect(denied.stdout).toMatch(/^denied: 1 unit of main\/units \(scheduled\): blocked until /);
      expect(
        (await cli('spend', 'main', '--cost', '1', '--bucket', 'search.list', '--config', file)).code,
      ).toBe(0);
    } finally {
      await ledger.close();
    }
  });
});

describe('one clear line and the documented exit code', () => {
  const noStack = (s: string) => expect(s).not.toMatch(/\n\s+at /);

  it('bad config file → 78 with one line per problem', async () => {
    const cfg = configFile('credentials:\n  - id: main\n    reserve: 20000\nmaxSleep: soon\n');
    const r = await cli('status', '--config', cfg);
    expect(r.code).toBe(78);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`quota-guard: ${cfg}: maxSleep: must be a duration`);
    noStack(r.stderr);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.every((l) => l.startsWith('quota-guard: '))).toBe(true);
  });

  it('missing config file → 78', async () => {
    const r = await cli('spend', 'main', '--cost', '1', '--config', '/nonexistent/qg.yaml');
    expect(r).toMatchObject({
      code: 78,
      stderr: 'quota-guard: /nonexistent/qg.yaml: config file not found (QG_CONFIG_INVALID)\n',
    });
  });

  it('unknown credential → 78', async () => {
    const cfg = configFile(smallConfig(sqliteStore()));
    const r = await cli('spend', 'nobody', '--cost', '1', '--config', cfg);
    expect(r).toMatchObject({
      code: 78,
      stderr: "quota-guard: unknown credential 'nobody' (configured: main) (QG_UNKNOWN_CREDENTIAL)\n",
    });
    const s = await cli('status', '--credential', 'nobody', '--config', cfg);
    expect(s.code).toBe(78);
  });

  it('unknown bucket → 78; bad arguments → 64', async () => {
    const cfg = configFile(smallConfig(sqliteStore()));
    const b = await cli('spend', 'main', '--cost', '1', '--bucket', 'nope', '--config', cfg);
    expect(b.code).toBe(78);
    expect(b.stderr).toMatch(/^quota-guard: unknown bucket 'nope'/);
    noStack(b.stderr);
    expect((await cli('spend', 'main', '--config', cfg)).code).toBe(64);
    expect((await cli('spend', 'main', '--cost', 'lots', '--config', cfg)).code).toBe(64);
    expect((await cli('spend', 'main', '--cost', '1', '--tier', 'vip', '--config', cfg)).code).toBe(64);
  });

  it('status and spend need no API key', async () => {
    const cfg = configFile(`store: "${sqliteStore()}"\n`);
    const saved = process.env['YOUTUBE_API_KEY'];
    delete process.env['YOUTUBE_API_KEY'];
    try {
      expect((await cli('spend', 'default', '--cost', '3', '--config', cfg)).code).toBe(0);
      const s = await cli('status', '--json', '--config', cfg);
      expect(s.code).toBe(0);
      expect(JSON.parse(s.stdout).credentials[0].buckets[0].used).toBe(3);
    } finally {
      if (saved !== undefined) process.env['YOUTUBE_API_KEY'] = saved;
    }
  });

  it('a spend from a script is refused when the store is down and the site is fail-closed', async () => {
    const cfg = configFile(
      'store: { url: "redis://127.0.0.1:1", connectTimeoutMs: 300 }\nstoreDown: { sites: { nightly: closed } }\n',
    );
    const closed = await cli('spend', 'default', '--cost', '1', '--tag', 'nightly:x', '--config', cfg);
    expect(closed.code).toBe(69);
    expect(closed.stdout).toContain('fails closed');
    const open = await cli('spend', 'default', '--cost', '1', '--config', cfg);
    expect(open.code).toBe(0);
    expect(open.stdout).toContain('without recording it');
    const status = await cli('status', '--config', cfg);
    expect(status.code).toBe(69);
    expect(status.stderr).toMatch(/^quota-guard: .*\(QG_STORE_UNAVAILABLE\)\n$/);
    // The operator's terms: which server, why, and what to change.
    expect(status.stderr).toMatch(
      /Redis ledger at 127\.0\.0\.1:1: cannot connect: connection refused \(ECONNREFUSED\); check that Redis runs there and the store address \(the config's `store`, else \$REDIS_URL\)/,
    );
  });
});
