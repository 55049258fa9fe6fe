/**
 * Every error class the client maps, provoked for real: HTTP answers from the simulator (or a
 * loopback server for the shapes the simulator never sends) and transport failures on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { createYouTubeClient, UpstreamError, type YouTubeClient } from '../../src/youtube/upstream/index.js';
import { closedPort, failure, httpServer, json, KEY, tcpServer } from './helpers.js';

let sim: Simulator;
let client: YouTubeClient;

beforeAll(async () => {
  sim = await startSimulator({ keys: [`${KEY}@main`], buckets: { 'search.list': 1 } });
  client = createYouTubeClient({ baseUrl: sim.url, apiKey: KEY });
});

afterAll(async () => {
  await client.close();
  await sim.close();
});

async function upstreamError(p: Promise<unknown>): Promise<UpstreamError> {
  const e = await failure(p);
  expect(e).toBeInstanceOf(UpstreamError);
  return e as UpstreamError;
}

describe('HTTP answers become typed errors with reached = yes', () => {
  it("search.list's daily bucket used up (429 naming a per-day limit) → QG_UPSTREAM_QUOTA_EXCEEDED", async () => {
    await client.searchList({ q: 'music' });
    const e = await upstreamError(client.searchList({ q: 'music' }));
    expect(e).toMatchObject({
      code: 'QG_UPSTREAM_QUOTA_EXCEEDED',
      reason: 'rateLimitExceeded',
      status: 429,
      reached: 'yes',
      quota: { period: 'day', metric: 'youtube.googleapis.com/search_list', unit: '1/d/{project}' },
    });
    expect(e.method).toBe('search.list');
    expect(e.charged).toBe(true);
    expect(e.exitCode).toBe(75);
  });

  it('rateLimitExceeded (403) and userRateLimitExceeded (429) → QG_UPSTREAM_RATE_LIMITED with Retry-After', async () => {
    sim.faults.rateLimitBurst({ count: 1, retryAfterSec: 2 });
    const a = await upstreamError(client.videoCategoriesList({ regionCode: 'US' }));
    expect(a).toMatchObject({ code: 'QG_UPSTREAM_RATE_LIMITED', reason: 'rateLimitExceeded', status: 403 });
    expect(a.retryAfterMs).toBe(2_000);
    sim.faults.rateLimitBurst({ count: 1, retryAfterSec: 3, status: 429, reason: 'userRateLimitExceeded' });
    const b = await upstreamError(client.videoCategoriesList({ regionCode: 'US' }));
    expect(b).toMatchObject({
      code: 'QG_UPSTREAM_RATE_LIMITED',
      reason: 'userRateLimitExceeded',
      status: 429,
    });
    expect(b.retryAfterMs).toBe(3_000);
  });

  it('an unknown key → QG_UPSTREAM_KEY_INVALID (exit 78)', async () => {
    const other = createYouTubeClient({ baseUrl: sim.url, apiKey: 'not-a-key-the-simulator-knows' });
    try {
      const e = await upstreamError(other.videoCategoriesList({ regionCode: 'US' }));
      expect(e).toMatchObject({
        code: 'QG_UPSTREAM_KEY_INVALID',
        reason: 'API_KEY_INVALID',
        status: 400,
        reached: 'yes',
      });
      expect(e.exitCode).toBe(78);
      // It reached the upstream, but no project can be charged for a key the upstream does not know.
      expect(e.charged).toBe(false);
    } finally {
      await other.close();
    }
  });

  it('a method the profile does not have → QG_UPSTREAM_NOT_FOUND', async () => {
    const classic = await startSimulator({ keys: [KEY], profile: 'youtube-classic' });
    const c = createYouTubeClient({ baseUrl: classic.url, apiKey: KEY });
    try {
      const e = await upstreamError(c.videosBatchGetStats(['abc']));
      expect(e).toMatchObject({ code: 'QG_UPSTREAM_NOT_FOUND', status: 404, reason: 'notFound' });
    } finally {
      await c.close();
      await classic.close();
    }
  });

  it('a region the upstream has no chart for → QG_UPSTREAM_REGION_UNSUPPORTED (78, not a bug)', async () => {
    const e = await upstreamError(client.videosListChart({ regionCode: 'ZZ' }));
    expect(e).toMatchObject({
      code: 'QG_UPSTREAM_REGION_UNSUPPORTED',
      status: 400,
      reason: 'invalidRegionCode',
      exitCode: 78,
    });
  });

  it('backendError → QG_UPSTREAM_SERVER_ERROR', async () => {
    sim.faults.next('error');
    const e = await upstreamError(client.videoCategoriesList({ regionCode: 'US' }));
    expect(e).toMatchObject({
      code: 'QG_UPSTREAM_SERVER_ERROR',
      status: 500,
      reason: 'backendError',
      reached: 'yes',
    });
  });

  it('forbidden, a bare 429, a 503 without a body and a non-JSON 502 are classified by status', async () => {
    const answers: Array<(res: import('node:http').ServerResponse) => void> = [
      (res) =>
        json(res, 403, {
          error: {
            code: 403,
            message: 'Forbidden',
            errors: [{ domain: 'global', reason: 'forbidden', message: 'x' }],
          },
        }),
      (res) =>
        json(
          res,
          429,
          { error: { code: 429, message: 'Too many', status: 'RESOURCE_EXHAUSTED' } },
          { 'retry-after': '1' },
        ),
      (res) => {
        res.writeHead(503);
        res.end();
      },
      (res) => {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html><body>Bad Gateway</body></html>');
      },
    ];
    let i = 0;
    const srv = await httpServer((_req, res) => answers[i++]!(res));
    const c = createYouTubeClient({ baseUrl: srv.url, apiKey: KEY });
    try {
      expect(await upstreamError(c.channelsList({ ids: ['UCx'] }))).toMatchObject({
        code: 'QG_UPSTREAM_FORBIDDEN',
        reason: 'forbidden',
        status: 403,
      });
      expect(await upstreamError(c.channelsList({ ids: ['UCx'] }))).toMatchObject({
        code: 'QG_UPSTREAM_RATE_LIMITED',
        status: 429,
        retryAfterMs: 1_000,
      });
      expect(await upstreamError(c.channelsList({ ids: ['UCx'] }))).toMatchObject({
        code: 'QG_UPSTREAM_SERVER_ERROR',
        status: 503,
      });
      const html = await upstreamError(c.channelsList({ ids: ['UCx'] }));
      expect(html).toMatchObject({ code: 'QG_UPSTREAM_SERVER_ERROR', status: 502 });
    } finally {
      await c.close();
      await srv.close();
    }
  });
});

describe('transport failures carry whether the request could have reached the upstream', () => {
  it('a closed port: never reached', async () => {
    const port = await closedPort();
    const c = createYouTubeClient({ baseUrl: `http://127.0.0.1:${port}/youtube/v3`, apiKey: KEY });
    try {
      const e = await upstreamError(c.videoCategoriesList({ regionCode: 'US' }));
      expect(e).toMatchObject({ code: 'QG_UPSTREAM_TRANSPORT', reached: 'never' });
      expect(e.charged).toBe(false);
      expect(e.message).toContain('ECONNREFUSED');
    } finally {
      await c.close();
    }
  });

  it('a name that does not resolve: never reached', async () => {
    const c = createYouTubeClient({ baseUrl: 'http://quota-guard-test.invalid/youtube/v3', apiKey: KEY });
    try {
      const e = await upstreamError(c.videoCategoriesList({ regionCode: 'US' }));
      expect(e).toMatchObject({ code: 'QG_UPSTREAM_TRANSPORT', reached: 'never' });
    } finally {
      await c.close();
    }
  });

  it('a TLS handshake that fails: never reached', async () => {
    // A plain-text peer: the client's TLS hello gets garbage back and the handshake fails.
    const srv = await tcpServer((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n'), 'https');
    const c = createYouTubeClient({ baseUrl: srv.url, apiKey: KEY });
    try {
      const e = await upstreamError(c.videoCategoriesList({ regionCode: 'US' }));
      expect(e).toMatchObject({ code: 'QG_UPSTREAM_TRANSPORT', reached: 'never' });
    } finally {
      await c.close();
      await srv.close();
    }
  });

  it('a peer that accepts TCP but never completes TLS: connect timeout, never reached', async () => {
    const srv = await tcpServer(() => {}, 'https');
    const c = createYouTubeClient({ baseUrl: srv.url, apiKey: KEY, timeouts: { connectMs: 300 } });
    try {
      const e = await upstreamError(c.videoCategoriesList({ regionCode: 'US' }));
      expect(e).toMatchObject({ code: 'QG_UPSTREAM_TRANSPORT', reached: 'never' });
      expect(e.message).toContain('UND_ERR_CONNECT_TIMEOUT');
    } finally {
      await c.close();
      await srv.close();
    }
  });

  it('an upstream that reads the request and hangs: may have been received, after the headers timeout', async () => {
    sim.faults.next('hang');
    const c = createYouTubeClient({ baseUrl: sim.url, apiKey: KEY, timeouts: { headersMs: 300 } });
    try {
      const before = sim.charged();
      const e = await upstreamError(c.videoCategoriesList({ regionCode: 'US' }));
      expect(e).toMatchObject({ code: 'QG_UPSTREAM_TRANSPORT', reached: 'maybe' });
      expect(e.message).toContain('UND_ERR_HEADERS_TIMEOUT');
      expect(e.charged).toBe(true);
      // …and indeed the simulator charged it.
      expect(sim.charged() - before).toBe(1);
      expect(sim.requests.at(-1)).toMatchObject({ fault: 'hang', status: 0, cost: 1 });
    } finally {
      await c.close();
    }
  });

  it('an upstream that resets the connection mid-response: may have been received', async () => {
    sim.faults.next('reset');
    const e = await upstreamError(client.videoCategoriesList({ regionCode: 'US' }));
    expect(e).toMatchObject({ code: 'QG_UPSTREAM_TRANSPORT', reached: 'maybe' });
    expect(sim.requests.at(-1)).toMatchObject({ fault: 'reset', status: 0, cost: 1 });
  });

  it('a body that stalls after the headers: may have been received, after the body timeout', async () => {
    const srv = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"kind":"youtube#videoCategoryListResponse",');
    });
    const c = createYouTubeClient({ baseUrl: srv.url, apiKey: KEY, timeouts: { bodyMs: 300 } });
    try {
      const e = await upstreamError(c.videoCategoriesList({ regionCode: 'US' }));
      expect(e).toMatchObject({ code: 'QG_UPSTREAM_TRANSPORT', reached: 'maybe' });
      expect(e.message).toContain('UND_ERR_BODY_TIMEOUT');
    } finally {
      await c.close();
      await srv.close();
    }
  });

  it('a call aborted before it was sent: never reached; the pool closed: never reached', async () => {
    const ac = new AbortController();
    ac.abort();
    const aborted = await upstreamError(
      client.videoCategoriesList({ regionCode: 'US' }, { signal: ac.signal }),
    );
    expect(aborted).toMatchObject({ code: 'QG_UPSTREAM_TRANSPORT', reached: 'never' });
    const c = createYouTubeClient({ baseUrl: sim.url, apiKey: KEY });
    await c.close();
    const closed = await upstreamError(c.videoCategoriesList({ regionCode: 'US' }));
    expect(closed).toMatchObject({ code: 'QG_UPSTREAM_TRANSPORT', reached: 'never' });
  });

  it('a call aborted while waiting for the answer: may have been received', async () => {
    sim.faults.next('hang');
    const ac = new AbortController();
    const p = client.videoCategoriesList({ regionCode: 'US' }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 200);
    const e = await upstreamError(p);
    expect(e).toMatchObject({ code: 'QG_UPSTREAM_TRANSPORT', reached: 'maybe' });
  });
});
