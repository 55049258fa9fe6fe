/**
 * The API key travels in the query string and must never leave the client: not in an error's
 * message, stack, properties, cause chain or URL, and not in a log line. Every error class is
 * provoked for real and everything it carries is searched for the key.
 */
import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import {
  createYouTubeClient,
  redactKeyParam,
  redactText,
  UpstreamError,
} from '../../src/youtube/upstream/index.js';
import { closedPort, failure, httpServer, json, KEY, type Running, tcpServer } from './helpers.js';

const UNKNOWN_KEY = 'AIzaSy-unknown-SECRET-9876543210';

/** Everything an error exposes, causes included. */
function everything(e: unknown): string {
  const parts: string[] = [];
  let cur: unknown = e;
  for (let depth = 0; cur !== undefined && cur !== null && depth < 10; depth++) {
    const err = cur as Error & Record<string, unknown>;
    parts.push(
      String(err.message),
      String(err.stack),
      JSON.stringify(err),
      inspect(err, { depth: 10, showHidden: true }),
    );
    for (const k of Object.getOwnPropertyNames(err)) parts.push(`${k}=${inspect(err[k], { depth: 10 })}`);
    cur = err.cause;
  }
  return parts.join('\n');
}

let sim: Simulator;
let echo: Running;
let logText = '';

beforeAll(async () => {
  sim = await startSimulator({ keys: [`${KEY}@main`], buckets: { 'search.list': 0 } });
  // A careless upstream that echoes the whole request URL (key included) in its answers.
  echo = await httpServer((req, res) => {
    if (req.url?.includes('/channels')) {
      json(res, 400, {
        error: { code: 400, message: `Bad request for ${req.url}`, errors: [{ reason: 'badRequest' }] },
      });
    } else {
      json(res, 200, { kind: 'youtube#videoListResponse', etag: req.url, items: [{ id: req.url }] });
    }
  });
});

afterAll(async () => {
  await sim.close();
  await echo.close();
});

describe('the API key never leaks', () => {
  it('from any error class, nor from the log lines', async () => {
    const logs = new Writable({
      write(chunk, _enc, done) {
        logText += String(chunk);
        done();
      },
    });
    const logger = pino({ level: 'debug' }, logs);
    const port = await closedPort();
    const tlsPeer = await tcpServer((s) => s.end('not tls'), 'https');
    const mk = (baseUrl: string, apiKey = KEY, extra = {}) =>
      createYouTubeClient({ baseUrl, apiKey, logger, ...extra });
    const good = mk(sim.url);
    const badKey = mk(sim.url, UNKNOWN_KEY);
    const quick = mk(sim.url, KEY, { timeouts: { headersMs: 300 } });
    const refused = mk(`http://127.0.0.1:${port}/youtube/v3`);
    const dns = mk('http://quota-guard-test.invalid/youtube/v3');
    const tls = mk(tlsPeer.url);
    const careless = mk(echo.url);
    const errors: unknown[] = [];
    const collect = async (p: Promise<unknown>) => errors.push(await failure(p));
    try {
      await collect(good.searchList({ q: 'x' })); // quotaExceeded (bucket of 0)
      sim.faults.rateLimitBurst({ count: 1 });
      await collect(good.videoCategoriesList({ regionCode: 'US' })); // rate limited
      await collect(badKey.videoCategoriesList({ regionCode: 'US' })); // keyInvalid
      await collect(good.videosListChart({ regionCode: 'ZZ' })); // a region without a chart
      sim.faults.next('error');
      await collect(good.videoCategoriesList({ regionCode: 'US' })); // 5xx
      sim.faults.next('reset');
      await collect(good.videoCategoriesList({ regionCode: 'US' })); // reset: maybe
      sim.faults.next('hang');
      await collect(quick.videoCategoriesList({ regionCode: 'US' })); // headers timeout: maybe
      await collect(refused.videoCategoriesList({ regionCode: 'US' })); // refused: never
      await collect(dns.videoCategoriesList({ regionCode: 'US' })); // DNS: never
      await collect(tls.videoCategoriesList({ regionCode: 'US' })); // TLS: never
      await collect(careless.channelsList({ ids: ['UCx'] })); // message echoing the URL
      await collect(careless.videosListChart({ regionCode: 'US' })); // bad shape echoing the URL
      await collect(good.videosListByIds([])); // invalid argument
    } finally {
      for (const c of [good, badKey, quick, refused, dns, tls, careless]) await c.close();
      await tlsPeer.close();
    }
    const codes = errors.map((e) => (e as UpstreamError).code);
    expect(new Set(codes)).toEqual(
      new Set([
        'QG_UPSTREAM_QUOTA_EXCEEDED',
        'QG_UPSTREAM_RATE_LIMITED',
        'QG_UPSTREAM_KEY_INVALID',
        'QG_UPSTREAM_BAD_REQUEST',
        'QG_UPSTREAM_REGION_UNSUPPORTED',
        'QG_UPSTREAM_SERVER_ERROR',
        'QG_UPSTREAM_TRANSPORT',
        'QG_UPSTREAM_BAD_RESPONSE',
        'QG_INVALID_ARGUMENT',
      ]),
    );
    for (const e of errors) {
      expect(e).toBeInstanceOf(UpstreamError);
      const all = everything(e);
      expect(all).not.toContain(KEY);
      expect(all).not.toContain(UNKNOWN_KEY);
      const url = (e as UpstreamError).url;
      if (url !== undefined) expect(url).toMatch(/[?&]key=\*\*\*(&|$)/);
    }
    // The careless upstream really did put the key in its answer: the client scrubbed it.
    expect(everything(errors[10])).toContain('key=***');
    // Transport failures carry a scrubbed cause, never undici's own error object.
    const transport = errors.filter((e) => (e as UpstreamError).code === 'QG_UPSTREAM_TRANSPORT');
    expect(transport).toHaveLength(5);
    for (const e of transport) {
      const cause = (e as Error).cause as Error & Record<string, unknown>;
      expect(cause).toBeInstanceOf(Error);
      expect(Object.keys(cause).filter((k) => k !== 'code' && k !== 'name')).toEqual([]);
    }
    expect(logText.length).toBeGreaterThan(0);
    expect(logText).toContain('key=***');
    expect(logText).not.toContain(KEY);
    expect(logText).not.toContain(UNKNOWN_KEY);
  });

  it('redacts key parameters in URLs and literal secrets in text', () => {
    expect(redactKeyParam('https://h/v3/videos?part=a&key=abc&x=1')).toBe(
      'https://h/v3/videos?part=a&key=***&x=1',
    );
    expect(redactKeyParam('https://h/v3/videos?key=abc')).toBe('https://h/v3/videos?key=***');
    expect(redactText('failed: s3cr3t/xyz and s3cr3t%2F', 's3cr3t/')).toBe('failed: ***xyz and ***');
  });
});
