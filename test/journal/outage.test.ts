/**
 * Proof: a store outage mid-run leaves nothing unrecorded. Callers on fail-open call sites go on
 * through the guard to the simulator while the store is away for ~5 s; every spend the ledger
 * could not take is journalled (fail-open) or settled by its id (answer lost), and once the store
 * answers and the journal is replayed, the units the ledger holds are the units the simulator
 * charged (its charge log), on each store:
 *
 * - Redis stopped (SIGKILL, restarted on its append-only file): spends fail at once, fail open, and
 *   are recorded from the journal at their time;
 * - Redis paused (SIGSTOP): spends are sent and not answered ("unknown"), and land when it wakes;
 * - SQLite with its write lock held by another process (python3) for ~5 s.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, type Guard } from '../../src/guard/index.js';
import { JournalFile } from '../../src/guard/journal.js';
import { bucketWindow } from '../../src/guard/keys.js';
import { openLedger } from '../../src/ledger/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { createYouTubeClient, type YouTubeClient } from '../../src/youtube/upstream/index.js';
import { capture, config } from '../guard/helpers.js';
import { startProcess } from '../harness/child.js';
import { type RedisServer, startRedisServer } from '../harness/redis.js';
import { fileTempDir } from '../harness/temp.js';
import { KEY } from '../upstream/helpers.js';

const tmp = fileTempDir('qg-outage-').dir;
let seq = 0;
let sim: Simulator;
let client: YouTubeClient;

beforeAll(async () => {
  sim = await startSimulator({ keys: [`${KEY}@main`], seed: 'journal-outage' });
  client = createYouTubeClient({ baseUrl: sim.url, apiKey: KEY });
});

afterAll(async () => {
  await client?.close();
  await sim?.close();
});

const cfg = config({ storeDown: { default: 'open' } });

/** Units the ledger holds on the default bucket now. */
async function ledgerUnits(ledger: Ledger): Promise<number> {
  const credential = cfg.credential('default');
  const { key, windowMs } = bucketWindow(credential, credential.buckets['units']!, Date.now());
  return (await ledger.peek({ key, windowMs })).used;
}

/**
 * Four callers spend through `guard.call` and fetch a chart page from the simulator, while
 * `outage` runs; then they stop. Returns the units the simulator charged meanwhile.
 */
async function runThrough(guard: Guard, outage: () => Promise<void>): Promise<number> {
  const before = sim.charged();
  let running = true;
  const caller = async (i: number) => {
    while (running) {
      const r = await guard.call({ credential: 'default', method: 'videos.list', tag: `w${i}` }, () =>
        client.videosListChart({ regionCode: 'us' }),
      );
      expect(r.ok).toBe(true);
      await sleep(30);
    }
  };
  const callers = Array.from({ length: 4 }, (_, i) => caller(i));
  await sleep(500);
  await outage();
  await sleep(1000);
  running = false;
  await Promise.all(callers);
  return sim.charged() - before;
}

function journalled(events: ReturnType<typeof capture>['events']) {
  const ops = { record: 0, unknown: 0 };
  for (const e of events) if (e.type === 'journalled') ops[e.op]++;
  return ops;
}

describe('Redis away for ~5 s mid-run', () => {
  let server: RedisServer;
  let ledger: Ledger;

  beforeAll(async () => {
    // Kept on disk at every write, so that a restart after SIGKILL finds what was answered.
    server = await startRedisServer(['--appendonly', 'yes', '--appendfsync', 'always']);
    ledger = await openLedger(server.url, { commandTimeoutMs: 500, connectTimeoutMs: 500 });
  });

  afterAll(async () => {
    server?.proc.kill('SIGCONT');
    await ledger?.close();
    await server?.stop();
    if (server) rmSync(server.dir, { recursive: true, force: true });
  });

  it('stopped and restarted: the journal records every fail-open spend; ledger = charged', async () => {
    const log = capture();
    const journal = new JournalFile({ path: join(tmp, `j${seq++}.jsonl`) });
    const guard = createGuard({ config: cfg, ledger, logger: log, onEvent: log.onEvent, journal });
    const start = await ledgerUnits(ledger);
    const charged = await runThrough(guard, async () => {
      await server.stop();
      await sleep(5000);
      await server.restart();
    });
    await guard.settlePending(15_000);
    const r = await guard.replayJournal();
    const ops = journalled(log.events);
    console.log(
      `redis stopped: charged ${charged}; journalled ${ops.record} fail-open, ${ops.unknown} unknown; replay ${JSON.stringify(r)}`,
    );
    expect(ops.record).toBeGreaterThan(10);
    expect(r.left).toBe(0);
    expect(journal.size()).toBe(0);
    expect((await ledgerUnits(ledger)) - start).toBe(charged);
    expect(guard.stats().recordedLateUnits).toBeGreaterThanOrEqual(ops.record);
  }, 60_000);

  it('paused (SIGSTOP): answers lost mid-command are settled by id; ledger = charged', async () => {
    const log = capture();
    const journal = new JournalFile({ path: join(tmp, `j${seq++}.jsonl`) });
    const guard = createGuard({ config: cfg, ledger, logger: log, onEvent: log.onEvent, journal });
    const start = await ledgerUnits(ledger);
    const charged = await runThrough(guard, async () => {
      server.proc.kill('SIGSTOP');
      await sleep(5000);
      server.proc.kill('SIGCONT');
    });
    await guard.settlePending(15_000);
    const r = await guard.replayJournal();
    const ops = journalled(log.events);
    console.log(
      `redis paused: charged ${charged}; journalled ${ops.record} fail-open, ${ops.unknown} unknown; replay ${JSON.stringify(r)}`,
    );
    expect(ops.unknown).toBeGreaterThan(0);
    expect(r.left).toBe(0);
    expect(journal.size()).toBe(0);
    expect((await ledgerUnits(ledger)) - start).toBe(charged);
  }, 60_000);
});

describe('SQLite with its write lock held by another process for ~5 s', () => {
  it('the journal records every fail-open spend; ledger = charged', async () => {
    const file = join(tmp, `l${seq++}.db`);
    const ledger = await openLedger(`sqlite:${file}`, { busyTimeoutMs: 200 });
    const log = capture();
    const journal = new JournalFile({ path: join(tmp, `j${seq++}.jsonl`) });
    const guard = createGuard({ config: cfg, ledger, logger: log, onEvent: log.onEvent, journal });
    const charged = await runThrough(guard, async () => {
      const holder = startProcess(
        'python3',
        [
          '-c',
          'import sqlite3, sys, time\n' +
            'c = sqlite3.connect(sys.argv[1], isolation_level=None)\n' +
            'c.execute("BEGIN IMMEDIATE")\n' +
            'print("locked", flush=True)\n' +
            'time.sleep(5)\n' +
            'c.execute("COMMIT")\n',
          file,
        ],
        { env: process.env, timeoutMs: 60_000 },
      );
      const exit = await holder.exited;
      expect(exit, exit.stderr).toMatchObject({ code: 0 });
      expect(exit.stdout).toContain('locked');
    });
    const r = await guard.replayJournal();
    const ops = journalled(log.events);
    console.log(
      `sqlite locked: charged ${charged}; journalled ${ops.record} fail-open; replay ${JSON.stringify(r)}`,
    );
    expect(ops.record).toBeGreaterThan(5);
    expect(r.left).toBe(0);
    expect(journal.size()).toBe(0);
    expect(await ledgerUnits(ledger)).toBe(charged);
    // Every journalled spend was recorded late, once (by the pass after the first answered spend).
    expect(guard.stats()).toMatchObject({ recordedLate: ops.record, recordedLateUnits: ops.record });
    await ledger.close();
  }, 60_000);
});
