/**
 * One reconcile, end to end but in process: the simulator's Cloud Monitoring (real HTTP on loopback)
 * against a real ledger (an SQLite file, a private redis-server). The day under test began 90
 * minutes ago on a minute boundary and everything happens in it, in the past: the store's own clock
 * (Redis's TIME) is the real one, and a late entry may not be written ahead of it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { bucketKey } from '../../src/guard/keys.js';
import { openLedger } from '../../src/ledger/open.js';
import type { Ledger } from '../../src/ledger/types.js';
import { staticTokens } from '../../src/reconcile/google-auth.js';
import { cloudMonitoringSource } from '../../src/reconcile/google-monitoring.js';
import { createReconciler, type ReconcileResult } from '../../src/reconcile/reconciler.js';
import type { UpstreamCountSource } from '../../src/reconcile/source.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { type RedisServer, startRedisServer } from '../harness/redis.js';
import { fileTempDir } from '../harness/temp.js';

const MIN = 60_000;
const DAY = 86_400_000;
const temp = fileTempDir('qg-reconcile-');
let redis: RedisServer | undefined;

beforeAll(async () => {
  redis = await startRedisServer();
}, 30_000);
afterAll(async () => {
  await redis?.stop();
});

const stores: Array<[string, () => string]> = [
  ['SQLite', () => `sqlite:${temp.path('quota.db')}`],
  ['Redis', () => redis!.url],
];

interface World {
  sim: Simulator;
  ledger: Ledger;
  source: UpstreamCountSource;
  config: Config;
  /** The day's start: a minute boundary 90 minutes ago. */
  base: number;
  /** The start of the day's minute `m`. */
  minute(m: number): number;
  /** The upstream charges `units` at `at` (someone spends the project's quota). */
  charge(at: number, units: number): void;
  /** A spend of ours: in the ledger of `credential` at `at`, and charged by the upstream at `upstreamAt`. */
  ours(credential: string, at: number, units: number, upstreamAt?: number): Promise<void>;
  reconcile(lag?: string): Promise<ReconcileResult>;
  /** Each credential's units per minute of the day, own and outside. */
  perMinute(credential: string): Promise<Map<number, { own: number; outside: number }>>;
}

const open: World[] = [];
afterEach(async () => {
  for (const w of open.splice(0)) {
    await w.source.close();
    await w.ledger.close();
    await w.sim.close();
  }
});

let prefix = 0;

async function world(storeUrl: string): Promise<World> {
  const base = Math.floor(Date.now() / MIN) * MIN - 90 * MIN;
  const sim = await startSimulator({ keys: ['k1@alpha', 'k2@alpha'] });
  const ledger = await openLedger(storeUrl, { keyPrefix: `t${process.pid}-${prefix++}:` });
  const source = cloudMonitoringSource({ baseUrl: sim.origin, tokens: staticTokens(sim.monitoring.token()) });
  const config = parseConfig(
    {
      credentials: [
        { id: 'a1', project: 'alpha' },
        { id: 'a2', project: 'alpha', apiKeyEnv: 'A2_KEY' },
      ],
      reconcile: { monitoring: { baseUrl: sim.origin } },
    },
    { env: {} },
  );
  const w: World = {
    sim,
    ledger,
    source,
    config,
    base,
    minute: (m) => base + m * MIN,
    charge(at, units) {
      sim.clock.set(at);
      sim.spendBehind('alpha', 'units', units);
      sim.clock.set(Date.now());
    },
    async ours(credential, at, units, upstreamAt = at) {
      const id = `own-${credential}-${at}`;
      await ledger.record({
        budgets: [{ key: bucketKey(credential, 'units'), windowMs: DAY }],
        cost: units,
        tag: 'trending:US:videos.list',
        entry: { key: `qg:{${credential}}:entry:${id}`, id, request: id },
        at,
      });
      w.charge(upstreamAt, units);
    },
    async reconcile(lag = '10m') {
      sim.clock.set(Date.now());
      return reconcilerOf(w, source, lag).reconcileOnce();
    },
    async perMinute(credential) {
      const rows = await ledger.perMinute({
        key: bucketKey(credential, 'units'),
        windowMs: DAY,
        fromMs: base,
        toMs: Date.now(),
      });
      return new Map(rows.map((r) => [(r.minute - base) / MIN, { own: r.own, outside: r.outside }]));
    },
  };
  open.push(w);
  return w;
}

/** A reconciler over the world's ledger, with `source` and a lag (`10m`), its day the world's. */
function reconcilerOf(w: World, source: UpstreamCountSource, lag = '10m') {
  const lagMs = parseConfig({ reconcile: { lag } }, { env: {} }).reconcile.lagMs;
  return createReconciler({
    config: { ...w.config, credentials: w.config.credentials, reconcile: { ...w.config.reconcile, lagMs } },
    ledger: w.ledger,
    source,
    clock: { now: () => Date.now(), dayStart: () => w.base, minuteMs: MIN },
  });
}

const units = (r: ReconcileResult) => {
  const p = r.projects[0]!;
  if (!p.ok) throw new Error(`not reconciled: ${p.error.message}`);
  return p.buckets.find((b) => b.bucket === 'units')!;
};

const outsideOf = async (w: World, credential: string) =>
  [...(await w.perMinute(credential))].filter(([, u]) => u.outside > 0).map(([m, u]) => [m, u.outside]);

describe.each(stores)('reconcile on %s', (_name, url) => {
  it('records outside spend at the minutes it appears, for every credential of the project', async () => {
    const w = await world(url());
    await w.ours('a1', w.minute(5) + 10_000, 3);
    await w.ours('a2', w.minute(6) + 5_000, 2); // the project's other key: not outside
    w.charge(w.minute(20) + 30_000, 40); // someone else
    await w.ours('a1', w.minute(30) + 59_900, 4, w.minute(31) + 100); // a spend on a minute's boundary
    const r = await w.reconcile();
    const b = units(r);
    expect(b).toMatchObject({ upstream: 49, own: 9, outside: 40, added: 40, written: 2, ledgerAbove: 0 });
    expect(await outsideOf(w, 'a1')).toEqual([[20, 40]]);
    expect(await outsideOf(w, 'a2')).toEqual([[20, 40]]);
    // The ledger's own view: the outside spend counts in the window like any spend.
    const peek = await w.ledger.peek({ key: bucketKey('a1', 'units'), windowMs: DAY });
    expect(peek.byTag['outside:alpha']).toBe(40);
  });

  it('changes nothing when run again, or twice at once', async () => {
    const w = await world(url());
    w.charge(w.minute(12) + 1_000, 7);
    w.charge(w.minute(47), 5);
    const [x, y] = await Promise.all([w.reconcile(), w.reconcile()]);
    expect(units(x).outside).toBe(12);
    expect(units(y).outside).toBe(12);
    const again = await w.reconcile();
    expect(units(again)).toMatchObject({ outside: 12, added: 0, written: 0 });
    expect(await outsideOf(w, 'a1')).toEqual([
      [12, 7],
      [47, 5],
    ]);
    const peek = await w.ledger.peek({ key: bucketKey('a2', 'units'), windowMs: DAY });
    expect(peek.used).toBe(12);
  });

  it('takes back as much outside spend as a spend of ours written late for the same minutes', async () => {
    const w = await world(url());
    w.charge(w.minute(25) + 2_000, 10);
    expect(units(await w.reconcile()).outside).toBe(10);
    // A journal replays 6 of those units: they were ours, spent while the store was down.
    await w.ledger.record({
      budgets: [{ key: bucketKey('a1', 'units'), windowMs: DAY }],
      cost: 6,
      tag: 'trending:US:videos.list',
      entry: { key: 'qg:{a1}:entry:journal-1', id: 'journal-1', request: 'journal-1' },
      at: w.minute(25) + 1_000,
    });
    const r = units(await w.reconcile());
    expect(r).toMatchObject({ upstream: 10, own: 6, outside: 4, added: -6 });
    expect(await outsideOf(w, 'a1')).toEqual([[25, 4]]);
  });

  it('counts a point the upstream publishes late at its own minute', async () => {
    const w = await world(url());
    w.charge(w.minute(40) + 1_000, 9);
    // Read while the point was still within Monitoring's delay: nothing to see yet.
    w.sim.clock.set(w.minute(42));
    expect(units(await reconcilerOf(w, w.source).reconcileOnce()).outside).toBe(0);
    const r = units(await w.reconcile());
    expect(r.outside).toBe(9);
    expect(await outsideOf(w, 'a1')).toEqual([[40, 9]]);
  });

  it('reports a ledger above the count and leaves it', async () => {
    const w = await world(url());
    await w.ledger.record({
      budgets: [{ key: bucketKey('a1', 'units'), windowMs: DAY }],
      cost: 5,
      tag: 'trending:US:videos.list',
      entry: { key: 'qg:{a1}:entry:never-sent', id: 'never-sent', request: 'never-sent' },
      at: w.minute(15),
    });
    const r = units(await w.reconcile());
    expect(r).toMatchObject({ upstream: 0, own: 5, outside: 0, ledgerAbove: 5, written: 0 });
    expect((await w.ledger.peek({ key: bucketKey('a1', 'units'), windowMs: DAY })).used).toBe(5);
  });

  it('compares no minute younger than the lag', async () => {
    const w = await world(url());
    const recent = Math.floor(Date.now() / MIN) * MIN - 7 * MIN;
    w.charge(recent + 1_000, 8);
    const r = units(await w.reconcile('10m'));
    expect(r.through).toBeLessThanOrEqual(Date.now() - 10 * MIN);
    expect(r.outside).toBe(0);
    // With a shorter lag the minute is old enough (and past Monitoring's delay of four minutes).
    expect(units(await w.reconcile('5m')).outside).toBe(8);
  });

  it('records nothing from a 403, a 404 project, a timeout or a body cut short; reads every page', async () => {
    const w = await world(url());
    w.charge(w.minute(10), 6);
    for (const [faults, code] of [
      [{ forbidden: true }, 'QG_RECONCILE_FORBIDDEN'],
      [{ notFound: true }, 'QG_RECONCILE_PROJECT'],
      [{ truncate: true }, undefined],
    ] as const) {
      w.sim.monitoring.clearFaults();
      w.sim.monitoring.setFaults(faults);
      const p = (await w.reconcile()).projects[0]!;
      expect(p.ok).toBe(false);
      if (!p.ok && code !== undefined) expect(p.error.code).toBe(code);
      expect(await outsideOf(w, 'a1')).toEqual([]);
    }
    w.sim.monitoring.clearFaults();
    w.sim.monitoring.setFaults({ latencyMs: 3_000 });
    const impatient = cloudMonitoringSource({
      baseUrl: w.sim.origin,
      tokens: staticTokens(w.sim.monitoring.token()),
      deadlineMs: 300,
    });
    const timedOut = (await reconcilerOf(w, impatient).reconcileOnce()).projects[0]!;
    await impatient.close();
    expect(!timedOut.ok && timedOut.error.code).toBe('QG_UPSTREAM_DEADLINE');
    expect(await outsideOf(w, 'a1')).toEqual([]);

    w.sim.monitoring.clearFaults();
    w.charge(w.minute(11), 1);
    w.sim.monitoring.setFaults({ pageSize: 1 });
    const paged = (await w.reconcile()).projects[0]!;
    expect(paged.ok && paged.reads).toBe(2);
    expect(await outsideOf(w, 'a1')).toEqual([
      [10, 6],
      [11, 1],
    ]);
  }, 20_000);
});
