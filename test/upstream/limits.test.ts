/**
 * The whole-request deadline and the response size limit, against loopback servers that drip a
 * byte at a time and that send 100 MB.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/outcome/errors.js';
import {
  createYouTubeClient,
  type YouTubeClient,
  type YouTubeClientOptions,
} from '../../src/youtube/upstream/client.js';
import { drip, failure, flood, httpServer, KEY, type Running } from './helpers.js';

const open: (Running | YouTubeClient)[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((x) => x.close()));
});

/** A loopback server answering with `handler`, and a client of it with `options`; both closed after each test. */
async function clientOf(
  handler: Parameters<typeof httpServer>[0],
  options: Omit<YouTubeClientOptions, 'baseUrl' | 'apiKey'>,
): Promise<YouTubeClient> {
  const server = await httpServer(handler);
  open.push(server);
  const client = createYouTubeClient({ baseUrl: server.url, apiKey: KEY, ...options });
  open.push(client);
  return client;
}

describe('one request has a deadline, connect to last byte', () => {
  it('ends an upstream that drips a byte every 200 ms although no gap trips the body timeout', async () => {
    const client = await clientOf(drip(200), { timeouts: { bodyMs: 5_000, totalMs: 1_000 } });
    const started = Date.now();
    const err = await failure(client.videosListChart({ regionCode: 'US' }));
    expect(err).toBeInstanceOf(UpstreamError);
    const e = err as UpstreamError;
    expect(e.code).toBe('QG_UPSTREAM_DEADLINE');
    expect(e.reached).toBe('yes');
    expect(e.charged).toBe(true);
    expect(e.exitCode).toBe(69);
    expect(e.message).toContain('1000 ms');
    expect(e.message).not.toContain(KEY);
    // Generous: only catches a client that waits for the drip to end.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('counts a deadline before any header as maybe charged', async () => {
    // Never answers.
    const client = await clientOf(() => {}, { timeouts: { headersMs: 10_000, totalMs: 500 } });
    const e = (await failure(client.videosListChart({ regionCode: 'US' }))) as UpstreamError;
    expect(e.code).toBe('QG_UPSTREAM_DEADLINE');
    expect(e.reached).toBe('maybe');
    expect(e.charged).toBe(true);
  });
});

describe('an answer larger than maxResponseBytes', () => {
  it('stops reading a 100 MB stream at the limit and closes the connection', async () => {
    const sent = { bytes: 0 };
    const limit = 2 ** 20;
    const client = await clientOf(flood(100 * 2 ** 20, sent), { maxResponseBytes: limit });
    const e = (await failure(client.videosListChart({ regionCode: 'US' }))) as UpstreamError;
    expect(e.code).toBe('QG_UPSTREAM_TOO_LARGE');
    expect(e.reached).toBe('yes');
    expect(e.charged).toBe(true);
    const read = e.details?.['bytesRead'] as number;
    expect(read).toBeGreaterThan(limit);
    expect(read).toBeLessThanOrEqual(limit + 128 * 1024);
    // Let the server notice the closed socket, then check it stopped far short of 100 MB.
    await new Promise((r) => setTimeout(r, 200));
    expect(sent.bytes).toBeLessThan(32 * 2 ** 20);
  });

  it('refuses a declared Content-Length over the limit before reading a byte', async () => {
    const client = await clientOf(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(100 * 2 ** 20) });
        res.write('{');
      },
      { maxResponseBytes: 2 ** 20 },
    );
    const e = (await failure(client.videosListChart({ regionCode: 'US' }))) as UpstreamError;
    expect(e.code).toBe('QG_UPSTREAM_TOO_LARGE');
    expect(e.details?.['bytesRead']).toBe(0);
  });
});
