import { describe, expect, it } from 'vitest';
import { simulatorControl, startSimulator } from '../../src/youtube/simulator/index.js';
import { get, JAN_15, KEY, outcome, useSimulators } from './helpers.js';

const setup = useSimulators({ keys: [`${KEY}@p`], now: () => JAN_15 });

describe('fault injection', () => {
  it('adds latency to every answer', async () => {
    const { client } = await setup({ faults: { latencyMs: 200 } });
    const t0 = performance.now();
    await client.videoCategoriesList({ regionCode: 'US' });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
  });

  it('answers 500 backendError at the error rate, repeatably for a seed', async () => {
    const all = await setup({ faults: { errorRate: 1 } });
    for (let i = 0; i < 5; i++) {
      expect(await outcome(all.client.videoCategoriesList({ regionCode: 'US' }))).toBe(
        'QG_UPSTREAM_SERVER_ERROR',
      );
    }
    const runs: string[][] = [];
    for (let run = 0; run < 2; run++) {
      const { client } = await setup({ seed: 'faults', faults: { errorRate: 0.3 } });
      const seen: string[] = [];
      for (let i = 0; i < 60; i++) seen.push(await outcome(client.videoCategoriesList({ regionCode: 'US' })));
      runs.push(seen);
    }
    expect(runs[1]).toEqual(runs[0]);
    const errors = runs[0]!.filter((o) => o === 'QG_UPSTREAM_SERVER_ERROR').length;
    expect(errors).toBeGreaterThan(5);
    expect(errors).toBeLessThan(40);
  });

  it('resets connections mid-response at the reset rate', async () => {
    const { sim, client } = await setup({ faults: { resetRate: 1 } });
    for (let i = 0; i < 3; i++) {
      expect(await outcome(client.videoCategoriesList({ regionCode: 'US' }))).toBe('transport:maybe');
    }
    expect(sim.requests.map((r) => r.fault)).toEqual(['reset', 'reset', 'reset']);
    expect(sim.charged()).toBe(3);
  });

  it('sends a burst of rateLimitExceeded with Retry-After, then recovers', async () => {
    const { sim } = await setup();
    sim.faults.rateLimitBurst({ count: 3, retryAfterSec: 7 });
    for (let i = 0; i < 3; i++) {
      const r = await get(sim, '/videoCategories', { part: 'snippet', regionCode: 'US', key: KEY });
      expect(r.status).toBe(403);
      expect(r.headers['retry-after']).toBe('7');
      expect(r.body.error.errors[0]).toMatchObject({ reason: 'rateLimitExceeded', domain: 'usageLimits' });
    }
    expect((await get(sim, '/videoCategories', { part: 'snippet', regionCode: 'US', key: KEY })).status).toBe(
      200,
    );
  });

  it('hangs queued requests until the client gives up', async () => {
    const { sim, client } = await setup({}, { timeouts: { headersMs: 300 } });
    sim.faults.next('hang', 2);
    expect(await outcome(client.videoCategoriesList({ regionCode: 'US' }))).toBe('transport:maybe');
    expect(await outcome(client.videoCategoriesList({ regionCode: 'US' }))).toBe('transport:maybe');
    expect(await outcome(client.videoCategoriesList({ regionCode: 'US' }))).toBe('ok');
  });

  it('rejects nonsense fault settings with a typed error', async () => {
    const { sim } = await setup();
    expect(() => sim.faults.set({ errorRate: 2 })).toThrow(
      expect.objectContaining({ code: 'QG_INVALID_ARGUMENT' }),
    );
    expect(() => sim.faults.next('explode' as never)).toThrow(
      expect.objectContaining({ code: 'QG_INVALID_ARGUMENT' }),
    );
    await expect(startSimulator({ faults: { latencyMs: -1 } })).rejects.toMatchObject({
      code: 'QG_INVALID_ARGUMENT',
      field: 'faults.latencyMs',
    });
    sim.faults.set({ errorRate: 0.5, latencyMs: 10 });
    expect(sim.faults.clear()).toMatchObject({
      errorRate: 0,
      latencyMs: 0,
      queued: { error: 0, reset: 0, hang: 0 },
    });
  });
});

describe('the control endpoint, for a simulator in another process', () => {
  it('drives faults, spend-behind and the clock, and reports stats, requests and charges', async () => {
    const { sim, client } = await setup({ quota: 10 });
    const ctl = simulatorControl(sim.url);

    await ctl.nextFaults('error', 1);
    expect(await outcome(client.videoCategoriesList({ regionCode: 'US' }))).toBe('QG_UPSTREAM_SERVER_ERROR');
    await ctl.rateLimitBurst({ count: 1, retryAfterSec: 2, status: 429 });
    expect(await outcome(client.videoCategoriesList({ regionCode: 'US' }))).toBe('QG_UPSTREAM_RATE_LIMITED');
    await ctl.setFaults({ latencyMs: 5 });
    expect((await ctl.stats()).faults.latencyMs).toBe(5);
    await ctl.clearFaults();

    const usage = await ctl.spendBehind('p', 'units', 7);
    expect(usage).toMatchObject({ used: 9, remaining: 1, spentBehind: 7 });
    expect(await outcome(client.videoCategoriesList({ regionCode: 'US' }))).toBe('ok');
    expect(await outcome(client.videoCategoriesList({ regionCode: 'US' }))).toBe(
      'QG_UPSTREAM_QUOTA_EXCEEDED',
    );

    expect(await ctl.charged()).toBe(4);
    expect(await ctl.charged({ project: 'p', bucket: 'units' })).toBe(4);
    const log = await ctl.requests();
    expect(log.map((r) => r.status)).toEqual([500, 429, 200, 403]);
    expect((await ctl.requests(log[1]!.seq)).map((r) => r.seq)).toEqual([log[2]!.seq, log[3]!.seq]);

    const clock = await ctl.clock();
    expect(clock.now).toBe(JAN_15);
    const after = await ctl.setClock(clock.nextResetAt);
    expect(after.nextResetAt).toBe(clock.nextResetAt + 86_400_000);
    expect(await outcome(client.videoCategoriesList({ regionCode: 'US' }))).toBe('ok');
    expect((await ctl.advanceClock(1_000)).now).toBe(clock.nextResetAt + 1_000);
    expect((await ctl.setClock('2026-07-01T00:00:00Z')).now).toBe(Date.parse('2026-07-01T00:00:00Z'));

    const stats = await ctl.stats();
    expect(stats.projects.p!.units).toMatchObject({ quota: 10, used: 0, charged: 5, spentBehind: 7 });
    expect(stats.requests.total).toBe(5);
    expect(stats.sockets.accepted).toBeGreaterThanOrEqual(1);

    await expect(ctl.spendBehind('p', 'units', 0)).rejects.toMatchObject({ code: 'QG_INVALID_ARGUMENT' });
    await expect(ctl.spendBehind('nobody', 'units', 1)).rejects.toMatchObject({
      code: 'QG_INVALID_ARGUMENT',
    });
    await expect(ctl.setFaults({ errorRate: 3 })).rejects.toMatchObject({ code: 'QG_INVALID_ARGUMENT' });
    // Control calls are neither metered nor logged as API requests.
    expect(sim.requests).toHaveLength(5);
  });
});
