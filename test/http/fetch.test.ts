/**
 * Guarded fetch and the undici interceptor against a loopback server that counts what reaches it:
 * a refused connection is refunded, a recorded per-day 429 blocks the bucket so the next call sends
 * nothing, a per-minute 429 stops with the next minute as its resume time, a 5xx is charged.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, type Dispatcher, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketWindow, createGuard, type Guard } from '../../src/guard/index.js';
import { type Classifier, GuardStoppedError, guardedFetch, guardInterceptor } from '../../src/http/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { UpstreamError } from '../../src/outcome/errors.js';
import { MINUTE_JITTER_MS } from '../../src/outcome/retry.js';
import { BACKENDS, capture, config } from '../guard/helpers.js';

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/youtube/${name}`, import.meta.url), 'utf8');
const PER_DAY = fixture('429-search-list-per-day.json');
const PER_MINUTE = fixture('429-queries-per-minute.json');

/** What the server answers next, per path; every request that reaches it is counted. */
let answers: Record<string, { status: number; body: string; headers?: Record<string, string> }> = {};
let hits: string[] = [];
let server: Server;
let base: string;
let closedPort: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    const a = answers[req.url ?? ''] ?? { status: 200, body: '{"items":[]}' };
    res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(a.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

const SEARCH = { credential: 'default', method: 'search.list', tag: 'mine:search.list' };
const VIDEOS = { credential: 'default', method: 'videos.list', tag: 'mine:videos.list' };

async function used(guard: Guard, bucket: string): Promise<number> {
  const c = guard.config.credential('default');
  return (await guard.ledger.peek(bucketWindow(c, c.buckets[bucket]!, Date.now()))).used;
}

describe.each(BACKENDS.slice(0, 2))('guarded HTTP ($name)', ({ open }) => {
  let ledger: Ledger;
  let guard: Guard;
  beforeAll(async () => {
    ledger = await open();
  });
  afterAll(async () => {
    await ledger.close();
  });
  const fresh = async () => {
    answers = {};
    hits = [];
    // Each test starts from an empty budget: unblock and a fresh guard over the same ledger.
    guard = createGuard({ config: config({}), ledger, logger: capture() });
    for (const b of ['units', 'search.list']) await guard.unblock('default', b);
  };

  it('fetch: a refused connection leaves used unchanged', async () => {
    await fresh();
    const before = await used(guard, 'units');
    const e = await guardedFetch(guard, VIDEOS, `http://127.0.0.1:${closedPort}/videos`).catch((x) => x);
    expect(e).toBeInstanceOf(UpstreamError);
    expect(e).toMatchObject({ code: 'QG_UPSTREAM_TRANSPORT', reached: 'never' });
    expect(await used(guard, 'units')).toBe(before);
    expect(guard.stats().refunds).toBeGreaterThanOrEqual(1);
  });

  it('fetch: a recorded per-day 429 blocks the bucket and the next call sends nothing', async () => {
    await fresh();
    answers['/search'] = { status: 429, body: PER_DAY };
    const r = await guardedFetch(guard, SEARCH, `${base}/search`);
    expect(r).toMatchObject({ ok: false, reason: 'upstream-quota', exitCode: 75, bucket: 'search.list' });
    expect(hits).toHaveLength(1);
    const again = await guardedFetch(guard, SEARCH, `${base}/search`);
    expect(again).toMatchObject({ ok: false, reason: 'blocked' });
    expect(hits).toHaveLength(1);
    // Other buckets go on.
    const other = await guardedFetch(guard, VIDEOS, `${base}/videos`);
    expect(other.ok && other.value.status).toBe(200);
    if (other.ok) expect(await other.value.json()).toEqual({ items: [] });
  });

  it('fetch: a per-minute 429 stops with the next minute boundary as its resume time', async () => {
    await fresh();
    answers['/videos'] = { status: 429, body: PER_MINUTE };
    const before = Date.now();
    const r = await guardedFetch(guard, VIDEOS, `${base}/videos`, undefined, { maxSleepMs: 5 });
    expect(r).toMatchObject({ ok: false, reason: 'rate-limited' });
    if (r.ok) throw new Error('unreachable');
    expect(r.resumeAt).toBeGreaterThanOrEqual(Math.ceil((before + 1) / 60_000) * 60_000);
    expect(r.resumeAt).toBeLessThan(Math.ceil((Date.now() + 1) / 60_000) * 60_000 + MINUTE_JITTER_MS + 1);
    expect(hits).toHaveLength(1);
  });

  it('fetch: a 5xx is charged; a GET is retried once, a POST never', async () => {
    await fresh();
    answers['/videos'] = { status: 503, body: '{"error":{"code":503,"message":"backendError"}}' };
    const before = await used(guard, 'units');
    const get = await guardedFetch(guard, VIDEOS, `${base}/videos`);
    expect(get.ok && get.value.status).toBe(503);
    expect(hits).toHaveLength(2);
    expect(await used(guard, 'units')).toBe(before + 2);
    const post = await guardedFetch(guard, VIDEOS, `${base}/videos`, { method: 'POST', body: '{}' });
    expect(post.ok && post.value.status).toBe(503);
    expect(hits).toHaveLength(3);
    expect(await used(guard, 'units')).toBe(before + 3);
  });

  it('fetch: a body over maxBytes is refused and stays charged', async () => {
    await fresh();
    answers['/videos'] = { status: 200, body: 'x'.repeat(5000) };
    const before = await used(guard, 'units');
    await expect(
      guardedFetch(guard, VIDEOS, `${base}/videos`, undefined, { maxBytes: 1000 }),
    ).rejects.toMatchObject({
      code: 'QG_UPSTREAM_BAD_RESPONSE',
    });
    expect(await used(guard, 'units')).toBe(before + 1);
  });

  // Another upstream's classifier says only `rate-limited`: the answer's Retry-After sets the wait,
  // not the next minute boundary (up to 60 s away).
  const onlyRateLimited: Classifier = ({ status }) =>
    status === 429 ? { kind: 'rate-limited' } : { kind: 'answer' };
  const retryAfter = (headers: Record<string, string>) => {
    answers['/limited'] = { status: 429, body: '{}', headers };
  };

  it('fetch: a custom classifier’s rate-limited waits for the Retry-After header, not the next minute', async () => {
    await fresh();
    for (const [headers, asked] of [
      [{ 'retry-after': '2' }, 2000],
      [{ 'retry-after': new Date(Date.now() + 30_000).toUTCString() }, 30_000],
    ] as const) {
      retryAfter(headers);
      const before = Date.now();
      const r = await guardedFetch(guard, VIDEOS, `${base}/limited`, undefined, {
        classify: onlyRateLimited,
        maxSleepMs: 0,
      });
      if (r.ok) throw new Error('a 429 passed');
      expect(r).toMatchObject({ reason: 'rate-limited', exitCode: 75 });
      // The earlier of the two, as for Google's own answers.
      const nextMinute = Math.ceil((before + 1) / 60_000) * 60_000;
      expect(r.resumeAt).toBeLessThanOrEqual(Math.min(Date.now() + asked, nextMinute + MINUTE_JITTER_MS));
      expect(r.resumeAt).toBeGreaterThanOrEqual(Math.min(before + asked - 1000, nextMinute));
    }
    // A wait the classifier names wins over the header.
    retryAfter({ 'retry-after': '30' });
    const own = await guardedFetch(guard, VIDEOS, `${base}/limited`, undefined, {
      classify: () => ({ kind: 'rate-limited', retryAfterMs: 1500 }),
      maxSleepMs: 0,
    });
    expect(own.ok === false && own.resumeAt).toBeLessThanOrEqual(Date.now() + 1500);
  });

  it('interceptor: a custom classifier’s rate-limited stops until the Retry-After', async () => {
    await fresh();
    retryAfter({ 'retry-after': '3' });
    const agent = new Agent();
    const d = agent.compose(guardInterceptor(guard, { spend: () => VIDEOS, classify: onlyRateLimited }));
    try {
      const before = Date.now();
      const e = await request(`${base}/limited`, { dispatcher: d }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(GuardStoppedError);
      const { stop } = e as GuardStoppedError;
      expect(stop).toMatchObject({ reason: 'rate-limited' });
      const nextMinute = Math.ceil((before + 1) / 60_000) * 60_000;
      expect(stop.resumeAt).toBeLessThanOrEqual(Math.min(Date.now() + 3000, nextMinute + MINUTE_JITTER_MS));
    } finally {
      await agent.close();
    }
  });

  it('interceptor: refused is refunded, per-day 429 stops and blocks, the next request is not sent', async () => {
    await fresh();
    const agent = new Agent();
    const spend = (o: Dispatcher.DispatchOptions) => (o.path.startsWith('/search') ? SEARCH : VIDEOS);
    const d = agent.compose(guardInterceptor(guard, { spend }));
    try {
      const before = await used(guard, 'units');
      await expect(request(`http://127.0.0.1:${closedPort}/videos`, { dispatcher: d })).rejects.toMatchObject(
        {
          code: 'ECONNREFUSED',
        },
      );
      expect(await used(guard, 'units')).toBe(before);

      const ok = await request(`${base}/videos`, { dispatcher: d });
      expect(ok.statusCode).toBe(200);
      expect(await ok.body.json()).toEqual({ items: [] });
      expect(await used(guard, 'units')).toBe(before + 1);

      answers['/search'] = { status: 429, body: PER_DAY };
      const stopped = await request(`${base}/search`, { dispatcher: d }).catch((e: unknown) => e);
      expect(stopped).toBeInstanceOf(GuardStoppedError);
      expect((stopped as GuardStoppedError).stop).toMatchObject({
        reason: 'upstream-quota',
        bucket: 'search.list',
      });
      const n = hits.length;
      const again = await request(`${base}/search`, { dispatcher: d }).catch((e: unknown) => e);
      expect((again as GuardStoppedError).stop).toMatchObject({ reason: 'blocked' });
      expect(hits).toHaveLength(n);

      // A per-minute answer: stopped, resuming at the next minute boundary (plus jitter), not now.
      answers['/videos'] = { status: 429, body: PER_MINUTE };
      const before429 = Date.now();
      const limited = await request(`${base}/videos`, { dispatcher: d }).catch((e: unknown) => e);
      expect((limited as GuardStoppedError).stop).toMatchObject({ reason: 'rate-limited' });
      expect((limited as GuardStoppedError).stop.resumeAt).toBeGreaterThanOrEqual(
        Math.ceil((before429 + 1) / 60_000) * 60_000,
      );

      // An error answer the guard does not act on reaches the caller whole.
      answers['/videos'] = { status: 404, body: '{"error":{"code":404,"message":"nope"}}' };
      const nf = await request(`${base}/videos`, { dispatcher: d });
      expect(nf.statusCode).toBe(404);
      expect(await nf.body.json()).toMatchObject({ error: { code: 404 } });
    } finally {
      await agent.close();
    }
  });
});
