import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard } from '../../src/guard/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { createYouTubeClient, type YouTubeClient } from '../../src/youtube/upstream/client.js';
import { capture, config, openSqlite } from './helpers.js';

const KEY = 'guard-test-secret-key-4242';
let sim: Simulator;
let client: YouTubeClient;
let ledger: Ledger;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  client = createYouTubeClient({ baseUrl: sim.url, apiKey: KEY });
  ledger = await openSqlite();
});

afterAll(async () => {
  await client?.close();
  await sim?.close();
  await ledger?.close();
});

async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('guard.call against the simulator', () => {
  it('blocks units until the upstream reset when someone else spent the quota; search goes on', async () => {
    const log = capture();
    const guard = createGuard({ config: config({}), ledger, logger: log, onEvent: log.onEvent });
    const page = await guard.call(
      { credential: 'default', method: 'videos.list', tag: 'trending:US:videos.list' },
      () => client.videosListChart({ regionCode: 'US' }),
    );
    expect(page.ok).toBe(true);
    if (page.ok) expect(page.value.items.length).toBeGreaterThan(0);

    sim.spendBehind('default', 'units', 10_000);
    const stop = await guard.call(
      { credential: 'default', method: 'videos.list', tag: 'trending:GB:videos.list' },
      () => client.videosListChart({ regionCode: 'GB' }),
    );
    expect(stop).toMatchObject({
      ok: false,
      reason: 'upstream-quota',
      exitCode: 75,
      blockedUntil: sim.nextResetAt(),
    });
    const requestsBefore = sim.requests.length;
    const again = await guard.call({ credential: 'default', method: 'videos.list' }, () =>
      client.videosListChart({ regionCode: 'DE' }),
    );
    expect(again).toMatchObject({ ok: false, reason: 'blocked' });
    expect(sim.requests.length).toBe(requestsBefore); // stopped by the ledger, not by another 403

    const search = await guard.call({ credential: 'default', method: 'search.list', tier: 'manual' }, () =>
      client.searchList({ q: 'music' }),
    );
    expect(search.ok).toBe(true);

    const everything = JSON.stringify({ lines: log.lines, stop, again });
    expect(everything).not.toContain(KEY);
  });

  it('refunds a connection that was refused, and keeps the key out of the error', async () => {
    const port = await closedPort();
    const dead = createYouTubeClient({ baseUrl: `http://127.0.0.1:${port}/youtube/v3`, apiKey: KEY });
    const guard = createGuard({
      config: config({ credentials: [{ id: 'other' }] }),
      ledger,
      logger: capture(),
    });
    try {
      const err = await guard
        .call(
          { credential: 'other', method: 'videos.list' },
          () => dead.videosListChart({ regionCode: 'US' }),
          {
            attempts: 2,
          },
        )
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toMatchObject({ code: 'QG_UPSTREAM_TRANSPORT', reached: 'never' });
      expect(`${String(err)} ${JSON.stringify(err)}`).not.toContain(KEY);
      expect(guard.stats()).toMatchObject({ allowed: 2, refunds: 2 });
      const s = await ledger.peek({ key: 'qg:{other}:units', windowMs: 86_400_000 });
      expect(s.used).toBe(0);
    } finally {
      await dead.close();
    }
  });

  it('refunds a request the upstream rejected as keyInvalid: it charged no project for it', async () => {
    const strict = await startSimulator({ port: 0, keys: ['the-right-key@default'] });
    const wrong = createYouTubeClient({ baseUrl: strict.url, apiKey: KEY });
    const guard = createGuard({
      config: config({ credentials: [{ id: 'badkey' }] }),
      ledger,
      logger: capture(),
    });
    try {
      const err = await guard
        .call({ credential: 'badkey', method: 'videos.list' }, () =>
          wrong.videosListChart({ regionCode: 'US' }),
        )
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toMatchObject({ code: 'QG_UPSTREAM_KEY_INVALID', reached: 'yes' });
      expect(strict.charged({})).toBe(0);
      expect(guard.stats()).toMatchObject({ allowed: 1, refunds: 1 });
      const s = await ledger.peek({ key: 'qg:{badkey}:units', windowMs: 86_400_000 });
      expect(s.used).toBe(0);
    } finally {
      await wrong.close();
      await strict.close();
    }
  });
});
