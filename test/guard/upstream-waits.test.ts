/**
 * A Google front-end page that asks for a wait ("Please try again in 30 seconds") is honoured: a
 * wait the call site sleeps is slept once, a longer one stops the call with that resume time
 * instead of retrying after a quarter of a second. Real guard, SQLite ledger, loopback upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard } from '../../src/guard/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { createYouTubeClient } from '../../src/youtube/upstream/client.js';
import { httpServer, KEY, type Running } from '../upstream/helpers.js';
import { capture, config, openSqlite } from './helpers.js';

const page = (n: number) =>
  `<!DOCTYPE html><html lang=en><title>Error 502 (Server Error)!!1</title><p><b>502.</b> <ins>That’s an error.</ins><p>The server encountered a temporary error and could not complete your request.<p>Please try again in ${n} seconds. <ins>That’s all we know.</ins>`;

let ledger: Ledger;
const open: Running[] = [];

beforeAll(async () => {
  ledger = await openSqlite();
});

afterAll(async () => {
  for (const s of open) await s.close();
  await ledger?.close();
});

async function frontEnd(n: number, thenOk = false) {
  const srv = await httpServer((_req, res) => {
    if (thenOk && srv.hits > 1) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'youtube#videoListResponse', items: [] }));
      return;
    }
    res.writeHead(502, { 'content-type': 'text/html; charset=UTF-8' });
    res.end(page(n));
  });
  open.push(srv);
  return srv;
}

describe('a 502 page asking for N seconds', () => {
  it('stops with that resume time when N is longer than the call site sleeps, after one request', async () => {
    const srv = await frontEnd(30);
    const client = createYouTubeClient({ baseUrl: srv.url, apiKey: KEY });
    const guard = createGuard({ config: config({ maxSleep: '5s' }), ledger, logger: capture() });
    const before = Date.now();
    const stop = await guard.call({ credential: 'default', method: 'videos.list' }, () =>
      client.videosListChart({ regionCode: 'US' }),
    );
    await client.close();
    expect(stop).toMatchObject({ ok: false, reason: 'upstream-busy', exitCode: 75, retryAfterMs: 30_000 });
    if (stop.ok) throw new Error('expected a stop');
    expect(stop.resumeAt).toBeGreaterThanOrEqual(before + 30_000);
    expect(stop.message).toContain('HTTP 502');
    expect(srv.hits).toBe(1);
  });

  it('sleeps a wait the call site allows, then retries once', async () => {
    const srv = await frontEnd(1, true);
    const client = createYouTubeClient({ baseUrl: srv.url, apiKey: KEY });
    const guard = createGuard({ config: config({ maxSleep: '5s' }), ledger, logger: capture() });
    const started = performance.now();
    const r = await guard.call({ credential: 'default', method: 'videos.list' }, () =>
      client.videosListChart({ regionCode: 'US' }),
    );
    await client.close();
    expect(r).toMatchObject({ ok: true, attempts: 2 });
    expect(srv.hits).toBe(2);
    // Not the backoff's 250 ms: the page's second.
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  });
});
