/**
 * Proof: spends whose answer never came are settled once Redis answers again. Redis is paused
 * (SIGSTOP) for 5 s while 8 callers spend: the commands written during the pause time out after
 * the command timeout and then all run when Redis wakes up. Cheap spends failed open (their callers
 * went on to the upstream), dear ones failed closed (their callers did not): once settled, the
 * ledger holds exactly the units the callers went on to spend, and the fail-open counter counts only
 * spends the ledger does not hold.
 */
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard } from '../../src/guard/index.js';
import { bucketWindow } from '../../src/guard/keys.js';
import { openLedger } from '../../src/ledger/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { type RedisServer, startRedisServer } from '../harness/redis.js';
import { capture, config } from './helpers.js';

let server: RedisServer;
let ledger: Ledger;

beforeAll(async () => {
  server = await startRedisServer();
  ledger = await openLedger(server.url, { commandTimeoutMs: 500, connectTimeoutMs: 500 });
});

afterAll(async () => {
  server?.proc.kill('SIGCONT');
  await ledger?.close();
  await server?.stop();
  if (server) rmSync(server.dir, { recursive: true, force: true });
});

describe('spends that timed out are settled', () => {
  it('after a 5 s pause, recorded = charged and fail-open counts only what was not recorded', async () => {
    const log = capture();
    const metrics = new Metrics();
    const cfg = config({ storeDown: { default: 'auto', openMaxCost: 1 } });
    const guard = createGuard({
      config: cfg,
      ledger,
      logger: log,
      onEvent: (e) => {
        log.onEvent(e);
        metrics.guardEvent(e);
      },
    });
    let charged = 0;
    let running = true;
    const caller = async (i: number) => {
      for (let n = 0; running; n++) {
        const cost = (i + n) % 3 === 0 ? 5 : 1; // 5 fails closed, 1 fails open
        const o = await guard.spend({ credential: 'default', cost, tag: `w${i}` });
        if (o.allowed) charged += cost; // the caller goes on to the upstream, which charges it
        await sleep(20);
      }
    };
    const callers = Array.from({ length: 8 }, (_, i) => caller(i));
    await sleep(500);
    server.proc.kill('SIGSTOP');
    await sleep(5000);
    server.proc.kill('SIGCONT');
    await sleep(1000);
    running = false;
    await Promise.all(callers);
    expect(await guard.settlePending(15_000)).toBe(0);

    const outcomes = log.events.filter((e) => e.type === 'fail-open' || e.type === 'fail-closed');
    const settled = log.events.filter((e) => e.type === 'settled');
    const refunded = settled.filter((e) => e.result === 'refunded').length;
    const recorded = settled.filter((e) => e.result === 'recorded').length;
    console.log(
      `${outcomes.length} spends met a paused store; settled: ${refunded} refunded, ${recorded} recorded, ` +
        `${settled.length - refunded - recorded} absent or abandoned; charged ${charged} units`,
    );
    // The pause did time spends out, both ways, and they were in flight (unsettled), not refused unsent.
    expect(outcomes.some((e) => e.type === 'fail-open')).toBe(true);
    expect(outcomes.some((e) => e.type === 'fail-closed')).toBe(true);
    expect(refunded).toBeGreaterThan(0);
    expect(recorded).toBeGreaterThan(0);

    const credential = cfg.credential('default');
    const { key, windowMs } = bucketWindow(credential, credential.buckets['units']!, Date.now());
    const snap = await ledger.peek({ key, windowMs });
    expect(snap.used).toBe(charged);
    // Every fail-open spend of the pause landed when Redis woke: none is counted as unrecorded.
    expect(guard.stats()).toMatchObject({ failOpen: 0, unsettled: 0 });
    const failOpenMetric = (
      await metrics.registry.getSingleMetric('quota_guard_fail_open_spends_total')?.get()
    )?.values.reduce((a, v) => a + v.value, 0);
    expect(failOpenMetric ?? 0).toBe(0);
  }, 30_000);

  it('a fail-open spend that timed out, then refunded by its caller, is taken back once it lands', async () => {
    const log = capture();
    const guard = createGuard({ config: config({}), ledger, logger: log, onEvent: log.onEvent });
    server.proc.kill('SIGSTOP');
    let o: Awaited<ReturnType<typeof guard.spend>>;
    try {
      o = await guard.spend({ credential: 'default', cost: 1, failMode: 'open', tag: 'late' });
    } finally {
      server.proc.kill('SIGCONT');
    }
    expect(o).toMatchObject({ reason: 'fail-open', unsettled: { cost: 1 } });
    // The caller did not reach the upstream after all (a refused connection): the guard refunds it.
    await guard.refund(o);
    expect(await guard.settlePending(10_000)).toBe(0);
    expect(log.events.filter((e) => e.type === 'settled')).toMatchObject([
      { result: 'refunded', unrecorded: false },
    ]);
  }, 20_000);
});
