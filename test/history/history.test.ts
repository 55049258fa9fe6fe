import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  MAX_RUN_AGE_MS,
  RUN_ID_MEMORY_MS,
  type RunHistory,
  type RunSummary,
} from '../../src/history/index.js';
import { HISTORY_TTL_MS, openRedisHistory } from '../../src/history/redis.js';
import { openSqliteHistory } from '../../src/history/sqlite.js';
import { parseYouTubeConfig as parseConfig } from '../../src/youtube/config/part.js';
import { regionFreshness } from '../../src/youtube/freshness.js';
import { regionOfJob } from '../../src/youtube/job-names.js';
import { dir } from '../cli/helpers.js';

let n = 0;
const STORES: Array<{ name: string; open: (maxRuns?: number) => Promise<RunHistory> }> = [
  {
    name: 'sqlite',
    open: async (maxRuns) =>
      openSqliteHistory({ path: join(dir, `history${n++}.db`), ...(maxRuns ? { maxRuns } : {}) }),
  },
  {
    name: 'redis',
    open: (maxRuns) =>
      openRedisHistory('redis', inject('redisUrl'), {
        keyPrefix: `${inject('keyPrefix')}hist${n++}:`,
        ...(maxRuns ? { maxRuns } : {}),
      }),
  },
  {
    name: 'redis-cluster',
    open: (maxRuns) =>
      openRedisHistory('redis-cluster', inject('redisClusterUrl'), {
        keyPrefix: `${inject('keyPrefix')}hist${n++}:`,
        ...(maxRuns ? { maxRuns } : {}),
      }),
  },
];

function run(over: Partial<RunSummary> & { startedAt: number }): RunSummary {
  return {
    credential: 'main',
    job: 'trending:US',
    labels: { region: 'US' },
    finishedAt: over.startedAt + 1_500,
    outcome: 'done',
    pages: 4,
    units: 4,
    items: 200,
    reason: null,
    used: { units: 40 },
    ...over,
  };
}

const opened: RunHistory[] = [];
afterEach(async () => {
  for (const h of opened.splice(0)) await h.close();
});

describe.each(STORES)('run history on $name', ({ open }) => {
  it('lists runs newest first, filtered by region, start time and credential, with every field kept', async () => {
    const h = await open();
    opened.push(h);
    const t = Date.now() - 10_000;
    await h.record(run({ startedAt: t }));
    const backfill = run({
      startedAt: t + 1_000,
      job: 'backfill',
      labels: {},
      outcome: 'stopped',
      reason: 'stopped: budget',
      used: { units: 90, search: 3 },
    });
    await h.record(backfill);
    await h.record(
      run({ startedAt: t + 2_000, job: 'trending:GB', labels: { region: 'GB' }, outcome: 'failed' }),
    );
    await h.record(run({ startedAt: t + 3_000, credential: 'other' }));

    const all = await h.list({ credentials: ['main'] });
    expect(all.map((r) => r.job)).toEqual(['trending:GB', 'backfill', 'trending:US']);
    expect(all[1]).toEqual(backfill);
    expect((await h.list({ credentials: ['main'], region: 'US' })).map((r) => r.startedAt)).toEqual([t]);
    expect((await h.list({ credentials: ['main'], since: t + 500 })).length).toBe(2);
    expect((await h.list({ credentials: ['main', 'other'], limit: 2 })).map((r) => r.credential)).toEqual([
      'other',
      'main',
    ]);
    // Only runs that were done count as a region's success; the latest wins across credentials.
    expect(await h.lastSuccess(['main'])).toEqual({ US: t + 1_500 });
    expect(await h.lastSuccess(['main', 'other'])).toEqual({ US: t + 4_500 });
    // Totals per job kind and outcome, per credential.
    expect(await h.totals(['main', 'other'])).toEqual([
      { credential: 'main', job: 'backfill', outcome: 'stopped', runs: 1, units: 4 },
      { credential: 'main', job: 'trending', outcome: 'done', runs: 1, units: 4 },
      { credential: 'main', job: 'trending', outcome: 'failed', runs: 1, units: 4 },
      { credential: 'other', job: 'trending', outcome: 'done', runs: 1, units: 4 },
    ]);
  });

  it('keeps a bounded number of runs per credential', async () => {
    const h = await open(100);
    opened.push(h);
    const t = Date.now() - 1_000_000;
    for (let i = 0; i < 400; i++) await h.record(run({ startedAt: t + i * 1_000 }));
    const kept = await h.list({ credentials: ['main'], limit: 10_000 });
    // SQLite trims exactly; Redis trims whole stream nodes (MAXLEN ~), so a little more may stay.
    expect(kept.length).toBeGreaterThanOrEqual(100);
    expect(kept.length).toBeLessThan(400);
    expect(kept[0]!.startedAt).toBe(t + 399_000);
    // The totals count every run, trimmed or not.
    expect(await h.totals(['main'])).toEqual([
      { credential: 'main', job: 'trending', outcome: 'done', runs: 400, units: 1_600 },
    ]);
  });
});

describe.each(STORES)('runs recorded once under an id on $name', ({ open }) => {
  it('records a run once however often its id is sent, answers the first record, and refuses another request', async () => {
    const h = await open();
    opened.push(h);
    const t = Date.now() - 10_000;
    // A reason with the id key's separator in it comes back whole.
    const first = run({ startedAt: t, client: 'php-cron', reason: 'stopped | budget', used: { units: 7 } });
    const once = { id: 'run-1', request: '["php-cron","a|b"]' };
    expect(await h.record(first, once)).toEqual({ run: first, replayed: false });
    // Sent again: the first record is the answer, whatever this one would have read from the ledger.
    const again = await h.record({ ...first, used: { units: 99 } }, once);
    expect(again).toEqual({ run: first, replayed: true });
    const conflict = h.record(first, { ...once, request: '["php-cron","other"]' });
    await expect(conflict).rejects.toMatchObject({ code: 'QG_ENTRY_CONFLICT', field: 'id' });
    // The same id on another credential is another run.
    await h.record({ ...first, credential: 'other' }, once);

    const listed = await h.list({ credentials: ['main', 'other'] });
    expect(listed.map((r) => [r.credential, r.client, r.reason])).toEqual([
      ['main', 'php-cron', 'stopped | budget'],
      ['other', 'php-cron', 'stopped | budget'],
    ]);
    expect(await h.totals(['main'])).toEqual([
      { credential: 'main', job: 'trending', outcome: 'done', runs: 1, units: 4 },
    ]);
    // A run of this host's own jobs has no client.
    await h.record(run({ startedAt: t + 1_000 }));
    expect((await h.list({ credentials: ['main'], limit: 1 }))[0]).not.toHaveProperty('client');
  });
});

describe('region freshness', () => {
  it('flags a region stale past two periods of the trending schedule and one never fetched', async () => {
    const config = parseConfig({
      store: 'sqlite::memory:',
      regions: ['US', 'GB', 'DE'],
      schedules: { trending: { cron: '0 * * * *', timeZone: 'UTC' } },
    });
    const h = openSqliteHistory({ path: ':memory:' });
    opened.push(h);
    const now = Date.UTC(2026, 0, 15, 12, 30);
    await h.record(run({ credential: 'default', startedAt: now - 30 * 60_000 }));
    await h.record(
      run({
        credential: 'default',
        job: 'trending:GB',
        labels: { region: 'GB' },
        startedAt: now - 3 * 3_600_000,
      }),
    );
    const f = await regionFreshness(config, h, now);
    expect(f.periodMs).toBe(3_600_000);
    expect(f.regions.map((r) => [r.region, r.stale])).toEqual([
      ['US', false],
      ['GB', true],
      ['DE', true],
    ]);
    expect(f.regions[0]!.ageMs).toBe(30 * 60_000 - 1_500);
    expect(f.regions[2]!.lastSuccessAt).toBeNull();
  });

  it('reads the region from the job name', () => {
    expect(regionOfJob('trending:US')).toBe('US');
    expect(regionOfJob('trending:US:10')).toBe('US');
    expect(regionOfJob('backfill')).toBeNull();
  });
});

describe('run history keys on Redis', () => {
  it('expire like every other key in the store, renewed by each run recorded', async () => {
    const prefix = `${inject('keyPrefix')}histttl${n++}:`;
    const h = await openRedisHistory('redis', inject('redisUrl'), { keyPrefix: prefix });
    opened.push(h);
    await h.record(run({ startedAt: Date.now() - 2_000 }));
    const { Redis } = await import('ioredis');
    const redis = new Redis(inject('redisUrl'));
    try {
      const keys = await redis.keys(`${prefix}*`);
      expect(keys.sort()).toEqual(
        ['qg:{main}:runs', 'qg:{main}:runs:success', 'qg:{main}:runs:totals'].map((k) => prefix + k),
      );
      for (const k of keys) {
        const ttl = await redis.pttl(k);
        expect(ttl, k).toBeGreaterThan(HISTORY_TTL_MS - 60_000);
        expect(ttl, k).toBeLessThanOrEqual(HISTORY_TTL_MS);
      }
      // A client's run id is remembered for longer than a run may be recorded after it ended.
      await h.record(run({ startedAt: Date.now() - 1_000, client: 'c' }), { id: 'x1', request: 'r' });
      const idTtl = await redis.pttl(`${prefix}qg:{main}:runs:id:x1`);
      expect(idTtl).toBeGreaterThan(RUN_ID_MEMORY_MS - 60_000);
      expect(RUN_ID_MEMORY_MS).toBeGreaterThan(MAX_RUN_AGE_MS);
    } finally {
      redis.disconnect();
    }
  });
});
