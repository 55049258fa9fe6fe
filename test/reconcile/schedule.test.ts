/**
 * The scheduled reconcile of `run` (startService) against the simulator's Cloud Monitoring, on an
 * SQLite file and a private redis-server: a tick reconciles, the run history keeps it, and
 * `status`, the status page and the metrics show Google's count beside the ledger's. Two schedules
 * on one store at once record the outside spend once. A Monitoring that refuses (403) or does not
 * answer in time leaves spending as it was and says so in one line.
 *
 * The reconcile's day began 90 minutes ago on a minute boundary (its clock's `dayStart`); the spends
 * behind the guard's back are put in it at past minutes, as test/reconcile/reconcile.test.ts does.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { statusView } from '../../src/cli/actions/status.js';
import { renderStatus } from '../../src/cli/render/status.js';
import { bucketKey } from '../../src/guard/keys.js';
import { openLedger } from '../../src/ledger/open.js';
import { renderStatusPage, statusPageData } from '../../src/metrics/page.js';
import { openQuotaGuard, type QuotaGuard } from '../../src/quota-guard.js';
import { staticTokens } from '../../src/reconcile/google-auth.js';
import { cloudMonitoringSource } from '../../src/reconcile/google-monitoring.js';
import type { ReconcileClock } from '../../src/reconcile/reconciler.js';
import { reconcileJob } from '../../src/reconcile/runs.js';
import { type Service, startService, type TickSource } from '../../src/scheduler/index.js';
import { startReconcileSchedule } from '../../src/scheduler/reconcile.js';
import { parseYouTubeConfig as parseConfig } from '../../src/youtube/config/part.js';
import type { YouTubeConfig } from '../../src/youtube/config/types.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { type Captured, capture } from '../guard/helpers.js';
import { type RedisServer, startRedisServer } from '../harness/redis.js';
import { fileTempDir } from '../harness/temp.js';

const MIN = 60_000;
const DAY = 86_400_000;
const temp = fileTempDir('qg-reconcile-schedule-');
let redis: RedisServer | undefined;

beforeAll(async () => {
  redis = await startRedisServer();
}, 30_000);
afterAll(async () => {
  await redis?.stop();
});

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const stores: Array<[string, () => string]> = [
  ['SQLite', () => `sqlite:${temp.path(`quota-${n}.db`)}`],
  ['Redis', () => redis!.url],
];

/** Each test's own credential ids and project (one redis-server serves the file). */
let n = 0;

const noTicks: TickSource = { schedule: () => ({ stop() {} }) };

function manualTicks(): TickSource & { fire(): void } {
  const handlers: Array<() => void> = [];
  return {
    schedule(_job, onTick) {
      const h = () => onTick(new Date());
      handlers.push(h);
      return { stop: () => void handlers.splice(handlers.indexOf(h), 1) };
    },
    fire: () => {
      for (const h of [...handlers]) h();
    },
  };
}

async function until(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface World {
  sim: Simulator;
  config: YouTubeConfig;
  qg: QuotaGuard;
  log: Captured;
  credential: string;
  project: string;
  clock: ReconcileClock;
  /** The start of the day's minute `m`. */
  minute(m: number): number;
  /** Someone spends the project's quota at `at`, behind the guard's back. */
  charge(at: number, units: number): void;
  /** The outside spend the ledger holds for the credential. */
  outside(): Promise<number>;
  source(deadlineMs?: number): ReturnType<typeof cloudMonitoringSource>;
}

async function world(storeUrl: string): Promise<World> {
  n++;
  const credential = `c${n}`;
  const project = `proj${n}`;
  const base = Math.floor(Date.now() / MIN) * MIN - 90 * MIN;
  const sim = await startSimulator({ keys: [`k${n}@${project}`] });
  cleanup.push(() => sim.close());
  const config = parseConfig(
    {
      store: storeUrl,
      cache: { path: temp.path(`cache-${n}.db`) },
      credentials: [{ id: credential, project, apiKeyEnv: 'QG_TEST_KEY' }],
      reconcile: { monitoring: { baseUrl: sim.origin } },
    },
    { env: { QG_TEST_KEY: `k${n}` } },
  );
  const log = capture();
  const qg = await openQuotaGuard(config, { logger: log, history: true });
  cleanup.push(() => qg.close());
  const w: World = {
    sim,
    config,
    qg,
    log,
    credential,
    project,
    clock: { now: () => Date.now(), dayStart: () => base, minuteMs: MIN },
    minute: (m) => base + m * MIN,
    charge(at, units) {
      sim.clock.set(at);
      sim.spendBehind(project, 'units', units);
      sim.clock.set(Date.now());
    },
    async outside() {
      const peek = await qg.ledger.peek({ key: bucketKey(credential, 'units'), windowMs: DAY });
      return peek.byTag[`outside:${project}`] ?? 0;
    },
    source(deadlineMs) {
      const s = cloudMonitoringSource({
        baseUrl: sim.origin,
        tokens: staticTokens(sim.monitoring.token()),
        ...(deadlineMs !== undefined ? { deadlineMs } : {}),
      });
      return s;
    },
  };
  return w;
}

async function service(w: World, ticks: TickSource): Promise<Service> {
  const svc = await startService({
    qg: w.qg,
    ticks: noTicks,
    jobs: () => [],
    reconcile: { source: w.source(), ticks, clock: w.clock },
  });
  cleanup.push(() => svc.stop('test'));
  return svc;
}

describe.each(stores)('the scheduled reconcile on %s', (_name, url) => {
  it('reconciles on its tick, and status, the page and the metrics show the figures', async () => {
    const w = await world(url());
    w.charge(w.minute(20) + 30_000, 40);
    const ticks = manualTicks();
    const svc = await service(w, ticks);
    expect(svc.reconcile).toBeDefined();
    w.sim.clock.set(Date.now());
    ticks.fire();
    await until('the reconcile', () => svc.reconcile!.counts.runs === 1);
    expect(await w.outside()).toBe(40);

    // The run history has it, done, with its figures.
    const runs = await w.qg.history!.list({ credentials: [w.credential], job: reconcileJob(w.project) });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ outcome: 'done', pages: 1, units: 0, reason: null });
    expect(runs[0]!.labels['bucket:units']).toBe('40 0 40 40 0');

    // status (another process would read the same store): the summary and the bucket's card.
    const view = await statusView(w.config, w.qg.ledger, w.log, undefined);
    expect(view.reconcile?.[0]?.success?.buckets).toEqual([
      { bucket: 'units', upstream: 40, own: 0, outside: 40, added: 40, ledgerAbove: 0 },
      { bucket: 'search.list', upstream: 0, own: 0, outside: 0, added: 0, ledgerAbove: 0 },
    ]);
    expect(view.summary?.map((l) => l.text)).toContainEqual(
      expect.stringMatching(
        new RegExp(`^${w.project}: spent outside the guard since the upstream's midnight: 40 units in units`),
      ),
    );
    const text = renderStatus(view, { localZone: 'UTC' });
    expect(text).toMatch(/upstream's count 40 · ledger 40 \(own 0 \+ outside 40\) from its midnight to/);
    expect(JSON.parse(JSON.stringify(view)).reconcile[0].project).toBe(w.project);

    // The page.
    const page = renderStatusPage(await statusPageData(w.config, w.qg.ledger, w.qg.history));
    expect(page).toContain('data-upstream="40" data-outside="40"');
    expect(page).toContain('spent outside the guard since the upstream');

    // The metrics.
    const metrics = await svc.metrics.scrape();
    const labels = `credential="${w.credential}",project="${w.project}",bucket="units"`;
    expect(metrics).toContain(`quota_guard_reconcile_upstream_units{${labels}} 40`);
    expect(metrics).toContain(`quota_guard_reconcile_ledger_units{${labels}} 40`);
    expect(metrics).toContain(`quota_guard_reconcile_outside_units{${labels}} 40`);
    const age = Number(
      new RegExp(`quota_guard_reconcile_age_seconds\\{project="${w.project}"\\} (\\S+)`).exec(metrics)?.[1],
    );
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(600);
  });

  it('two schedules on one store at once record the outside spend once; one process runs one at a time', async () => {
    const w = await world(url());
    w.charge(w.minute(12) + 1_000, 7);
    w.charge(w.minute(47), 5);
    const other = await openLedger(url());
    cleanup.push(() => other.close());
    const schedule = (ledger: typeof other) => {
      const s = startReconcileSchedule({
        config: w.config,
        ledger,
        source: w.source(),
        logger: capture(),
        history: w.qg.history!,
        ticks: noTicks,
        clock: w.clock,
      });
      cleanup.push(() => s.stop());
      return s;
    };
    const a = schedule(w.qg.ledger);
    const b = schedule(other);
    w.sim.clock.set(Date.now());
    // Twice in one process: the second call gets the first's reconcile.
    const [x, x2, y] = await Promise.all([a.runNow(), a.runNow(), b.runNow()]);
    expect(x2).toBe(x);
    expect(a.counts.runs).toBe(1);
    for (const r of [x, y]) {
      const p = r!.projects[0]!;
      expect(p.ok && p.buckets[0]!.outside).toBe(12);
    }
    const [again] = await Promise.all([a.runNow(), b.runNow()]);
    const p = again!.projects[0]!;
    expect(p.ok && p.buckets[0]).toMatchObject({ outside: 12, added: 0, written: 0 });
    expect(await w.outside()).toBe(12);
    const runs = await w.qg.history!.list({ credentials: [w.credential], job: reconcileJob(w.project) });
    expect(runs.map((r) => r.outcome)).toEqual(['done', 'done', 'done', 'done']);
  });
});

describe('a failing Monitoring', () => {
  it('403 and a timeout: spending goes on, nothing recorded, one line per cause, errors counted', async () => {
    const w = await world(`sqlite:${temp.path('failing.db')}`);
    w.charge(w.minute(20), 40);
    const ticks = manualTicks();
    const svc = await startService({
      qg: w.qg,
      ticks: noTicks,
      jobs: () => [],
      reconcile: { source: w.source(2_000), ticks, clock: w.clock },
    });
    cleanup.push(() => svc.stop('test'));
    w.sim.monitoring.setFaults({ forbidden: true });
    for (let i = 1; i <= 3; i++) {
      ticks.fire();
      await until(`reconcile ${i}`, () => svc.reconcile!.counts.runs === i);
    }
    w.sim.monitoring.setFaults({ forbidden: false, latencyMs: 10_000 });
    for (let i = 4; i <= 5; i++) {
      ticks.fire();
      await until(`reconcile ${i}`, () => svc.reconcile!.counts.runs === i, 60_000);
    }
    w.sim.monitoring.clearFaults();
    // Nothing recorded from them; a spend through the guard is allowed as before.
    expect(await w.outside()).toBe(0);
    const spend = await w.qg.guard.spend({
      credential: w.credential,
      cost: 1,
      tier: 'manual',
      tag: 'manual:x',
    });
    expect(spend.allowed).toBe(true);
    // One warning line per cause, however often it failed.
    const warnings = w.log.lines.filter(
      (l) => l.level === 'warn' && l.msg.startsWith(`reconcile ${w.project}`),
    );
    expect(warnings.map((l) => (l.obj as { code: string }).code)).toEqual([
      'QG_RECONCILE_FORBIDDEN',
      'QG_UPSTREAM_DEADLINE',
    ]);
    expect(warnings[0]!.msg).toContain('roles/monitoring.viewer');
    const metrics = await svc.metrics.scrape();
    expect(metrics).toContain(
      `quota_guard_reconcile_errors_total{project="${w.project}",code="QG_RECONCILE_FORBIDDEN"} 3`,
    );
    expect(metrics).toContain(
      `quota_guard_reconcile_errors_total{project="${w.project}",code="QG_UPSTREAM_DEADLINE"} 2`,
    );
    // No success yet: no age, no figures; status says the last one failed.
    expect(metrics).not.toContain('quota_guard_reconcile_age_seconds{');
    const runs = await w.qg.history!.list({ credentials: [w.credential], job: reconcileJob(w.project) });
    expect(runs.map((r) => r.outcome)).toEqual(['unavailable', 'unavailable', 'failed', 'failed', 'failed']);
    const view = await statusView(w.config, w.qg.ledger, w.log, undefined);
    expect(view.summary?.map((l) => l.text)).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^${w.project}: the last reconcile failed \\(none succeeded yet\\): .*QG_UPSTREAM_DEADLINE`,
        ),
      ),
    );
    // Monitoring back: the next tick records the outside spend.
    ticks.fire();
    await until('reconcile 6', () => svc.reconcile!.counts.runs === 6);
    expect(await w.outside()).toBe(40);
  }, 120_000);
});
