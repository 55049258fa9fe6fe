/**
 * Proof: the real API's 429 for a used-up per-day bucket (ErrorInfo RATE_LIMIT_EXCEEDED,
 * quota_limit defaultSearchListPerDayPerProject, quota_unit 1/d/{project}), replayed from a
 * recording through the real guard on a SQLite ledger. One request reaches the upstream, the bucket
 * it names is blocked until midnight in Los Angeles, the next run sends nothing and stops with exit
 * 75 and the resume time, status shows the block, and the other buckets go on spending. A
 * per-minute 429 stops until the next minute and blocks nothing. The clock is fixed, so the day it runs on is moot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextMidnight } from '../../src/calendar-day.js';
import { createGuard, quotaStatus } from '../../src/guard/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { createYouTubeClient } from '../../src/youtube/upstream/client.js';
import { KEY } from '../upstream/helpers.js';
import { type Replay, replayServer } from '../upstream/recordings.js';
import { capture, config, openSqlite } from './helpers.js';

/** 2026-11-23 11:00 in Los Angeles: the upstream's midnight is 2026-11-24T08:00Z. */
const NOW = Date.parse('2026-11-23T19:00:00Z');
const MIDNIGHT_LA = Date.parse('2026-11-24T08:00:00Z');
const now = () => NOW;

let ledger: Ledger;
const servers: Replay[] = [];

beforeAll(async () => {
  ledger = await openSqlite({ now });
});

afterAll(async () => {
  for (const s of servers) await s.close();
  await ledger?.close();
});

async function upstream(routes: Record<string, string>) {
  const srv = await replayServer(routes);
  servers.push(srv);
  return { srv, client: createYouTubeClient({ baseUrl: srv.url, apiKey: KEY }) };
}

function bucketsOf(report: Awaited<ReturnType<typeof quotaStatus>>, credential: string) {
  const c = report.credentials.find((x) => x.id === credential)!;
  return Object.fromEntries(c.buckets.map((b) => [b.id, b]));
}

describe('a 429 naming a per-day limit, through the guard', () => {
  it('blocks search.list until midnight in Los Angeles after one request; units go on', async () => {
    expect(nextMidnight('America/Los_Angeles', NOW)).toBe(MIDNIGHT_LA);
    const cfg = config({ credentials: [{ id: 'g' }] });
    const guard = createGuard({ config: cfg, ledger, logger: capture(), now });
    const { srv, client } = await upstream({
      search: '429-search-list-per-day.json',
      channels: '200-channels.list-terminated.json',
    });
    const search = () =>
      guard.call({ credential: 'g', method: 'search.list', tier: 'manual' }, () =>
        client.searchList({ q: 'news' }),
      );

    const first = await search();
    expect(first).toMatchObject({
      ok: false,
      reason: 'upstream-quota',
      bucket: 'search.list',
      exitCode: 75,
      resumeAt: MIDNIGHT_LA,
      blockedUntil: MIDNIGHT_LA,
    });
    expect(srv.hits).toBe(1);
    if (!first.ok) expect(first.message).toContain('2026-11-24T08:00:00.000Z');
    const spent = await ledger.peek({ key: 'qg:{g}:search.list', windowMs: 86_400_000 });
    expect(spent.used).toBe(1);

    // The next run stops at the ledger: nothing is sent.
    const again = await search();
    expect(again).toMatchObject({ ok: false, reason: 'blocked', exitCode: 75, resumeAt: MIDNIGHT_LA });
    if (!again.ok)
      expect(again.message).toMatch(/blocked until 2026-11-24T08:00:00\.000Z.*rateLimitExceeded/);
    expect(srv.hits).toBe(1);

    const status = bucketsOf(await quotaStatus(cfg, ledger, { now }), 'g');
    expect(status['search.list']!.blockedUntil).toBe(new Date(MIDNIGHT_LA).toISOString());
    expect(status['search.list']!.blockedReason).toMatch(/defaultSearchListPerDayPerProject/);
    expect(status['units']!.blockedUntil).toBeNull();
    expect(status['videos.batchGetStats']!.blockedUntil).toBeNull();

    // The shared units bucket still spends.
    const channels = await guard.call({ credential: 'g', method: 'channels.list' }, () =>
      client.channelsList({ ids: ['UCz1bw0-JU6pFz8WYnr9i4lw'] }),
    );
    expect(channels).toMatchObject({ ok: true, value: { items: [] } });
    expect(srv.hits).toBe(2);
    await client.close();
  });

  it('blocks the bucket the answer names, not the one the call spent', async () => {
    const cfg = config({ credentials: [{ id: 'up' }] });
    const guard = createGuard({ config: cfg, ledger, logger: capture(), now });
    const { client } = await upstream({ videos: '429-video-uploads-per-day-no-details.json' });
    const stop = await guard.call({ credential: 'up', method: 'videos.list' }, () =>
      client.videosListChart({ regionCode: 'US' }),
    );
    expect(stop).toMatchObject({ ok: false, reason: 'upstream-quota', bucket: 'videos.insert' });
    const status = bucketsOf(await quotaStatus(cfg, ledger, { now }), 'up');
    expect(status['videos.insert']!.blockedUntil).toBe(new Date(MIDNIGHT_LA).toISOString());
    expect(status['units']!.blockedUntil).toBeNull();
    await client.close();
  });

  it('blocks the bucket the call spent when the named bucket is one the profile does not know', async () => {
    const cfg = config({ credentials: [{ id: 'unk' }] });
    const guard = createGuard({ config: cfg, ledger, logger: capture(), now });
    const { srv, client } = await upstream({ search: '429-unknown-bucket-per-day.json' });
    const stop = await guard.call({ credential: 'unk', method: 'search.list', tier: 'manual' }, () =>
      client.searchList({ q: 'chat' }),
    );
    expect(stop).toMatchObject({ ok: false, reason: 'upstream-quota', bucket: 'search.list' });
    expect(srv.hits).toBe(1);
    const status = bucketsOf(await quotaStatus(cfg, ledger, { now }), 'unk');
    expect(status['search.list']!.blockedUntil).toBe(new Date(MIDNIGHT_LA).toISOString());
    expect(status['units']!.blockedUntil).toBeNull();
    await client.close();
  });

  it('stops a per-minute 429 until the next minute (plus jitter), after one request, and blocks nothing', async () => {
    const cfg = config({ credentials: [{ id: 'pm' }] });
    const guard = createGuard({ config: cfg, ledger, logger: capture(), now });
    const { srv, client } = await upstream({ videos: '429-queries-per-minute.json' });
    const stop = await guard.call({ credential: 'pm', method: 'videos.list' }, () =>
      client.videosListChart({ regionCode: 'US' }),
    );
    expect(stop).toMatchObject({ ok: false, reason: 'rate-limited', exitCode: 75 });
    if (stop.ok) throw new Error('expected a stop');
    // NOW is on a minute boundary: the minute that refused is spent, and maxSleep (30 s) is shorter
    // than the wait, so no second charged attempt falls in it.
    expect(stop.error?.quota).toMatchObject({ interval: 'minute' });
    expect(stop.resumeAt).toBeGreaterThanOrEqual(NOW + 60_000);
    expect(stop.resumeAt).toBeLessThanOrEqual(NOW + 62_000);
    expect(stop.message).toContain('per-minute');
    expect(srv.hits).toBe(1);
    expect(guard.stats().blocks).toBe(0);
    const status = bucketsOf(await quotaStatus(cfg, ledger, { now }), 'pm');
    for (const b of Object.values(status)) expect(b.blockedUntil).toBeNull();
    expect(status['units']!.used).toBe(1);
    await client.close();
  });
});
