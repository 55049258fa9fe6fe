/**
 * Steps of the host clock on the SQLite ledger, with injected wall and monotonic clocks: the real
 * time is the monotonic clock; the wall clock is stepped forward and back. In no real window may
 * more than the limit be admitted, and the budget may not stay shut longer than the real window
 * (plus the tolerance) after its entries were spent.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLOCK_STEP_TOLERANCE_MS, type ClockStep } from '../../src/ledger/clock.js';
import { openLedger } from '../../src/ledger/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { createMetrics } from '../../src/metrics/metrics.js';

const dir = mkdtempSync(join(tmpdir(), 'qg-clock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const H = 3_600_000;
const MIN = 60_000;
const LIMIT = 100;
const budget = { key: 'k', limit: LIMIT, windowMs: H };
let n = 0;

/** A host whose real time (`real`) only moves forward and whose wall clock is off by `offset`. */
class Host {
  real = 1_750_000_000_000;
  offset = 0;
  boot = 'boot-1';
  readonly steps: ClockStep[] = [];
  /** Units admitted, by real time. */
  readonly admitted: Array<{ at: number; cost: number }> = [];
  readonly file = join(dir, `ledger-${n++}.db`);
  ledger!: Ledger;

  async open(): Promise<this> {
    this.ledger = await openLedger(`sqlite:${this.file}`, {
      now: () => this.real + this.offset,
      monotonic: () => this.real - 1_700_000_000_000,
      bootId: this.boot,
      onClockStep: (s) => this.steps.push(s),
    });
    return this;
  }

  /** Spend 10 units until denied; returns how many were admitted. */
  async spendAll(): Promise<number> {
    let units = 0;
    for (;;) {
      const d = await this.ledger.spend({ budgets: [budget], cost: 10 });
      if (!d.allowed) return units;
      units += 10;
      this.admitted.push({ at: this.real, cost: 10 });
    }
  }

  /** The most units admitted in any real window of one hour. */
  maxInAnyRealHour(): number {
    let max = 0;
    for (const a of this.admitted) {
      const inWindow = this.admitted.filter((b) => b.at >= a.at && b.at < a.at + H);
      max = Math.max(
        max,
        inWindow.reduce((s, b) => s + b.cost, 0),
      );
    }
    return max;
  }
}

describe('clock steps on the SQLite ledger', () => {
  it('+24 h and back (NTP correcting a host that booted with a wrong clock): never 2x, never stuck', async () => {
    const metrics = createMetrics();
    const before = Number(/quota_guard_clock_steps_total (\d+)/.exec(await metrics.scrape())?.[1]);
    const h = await new Host().open();
    expect(await h.spendAll()).toBe(LIMIT);
    h.real += 5 * MIN;
    h.offset = 24 * H; // forward
    expect(await h.spendAll()).toBe(0);
    h.real += 5 * MIN;
    h.offset = 0; // and back
    expect(await h.spendAll()).toBe(0);
    // One real hour after the first spends, the budget frees as if nothing had happened.
    h.real += 51 * MIN;
    expect(await h.spendAll()).toBe(LIMIT);
    expect(h.maxInAnyRealHour()).toBe(LIMIT);
    expect(h.steps.map((s) => [s.stepMs, s.how])).toEqual([
      [24 * H, 'monotonic'],
      [-24 * H, 'monotonic'],
    ]);
    // Counted in the metric /metrics serves.
    expect(await metrics.scrape()).toContain(`quota_guard_clock_steps_total ${before + 2}`);
    await h.ledger.close();
  });

  it('+2 h and back, spending in between: the limit holds in every real hour', async () => {
    const h = await new Host().open();
    expect(await h.spendAll()).toBe(LIMIT);
    const got: number[] = [];
    for (const [offset, wait] of [
      [2 * H, 20 * MIN],
      [0, 20 * MIN],
      [2 * H, 25 * MIN], // 65 real minutes after the first spends: they have left the window
      [0, 10 * MIN],
    ] as const) {
      h.real += wait;
      h.offset = offset;
      got.push(await h.spendAll());
      expect(h.maxInAnyRealHour()).toBeLessThanOrEqual(LIMIT);
    }
    expect(got).toEqual([0, 0, LIMIT, 0]);
    await h.ledger.close();
  });

  it('-1 h: the budget frees after the real hour, not two', async () => {
    const h = await new Host().open();
    expect(await h.spendAll()).toBe(LIMIT);
    h.real += 10 * MIN;
    h.offset = -H;
    expect(await h.spendAll()).toBe(0);
    expect((await h.ledger.peek({ key: 'k', windowMs: H })).used).toBe(LIMIT);
    h.real += 50 * MIN + CLOCK_STEP_TOLERANCE_MS;
    expect(await h.spendAll()).toBe(LIMIT);
    expect(h.steps).toEqual([
      { stepMs: -H, at: h.real - 50 * MIN - CLOCK_STEP_TOLERANCE_MS - H, how: 'monotonic' },
    ]);
    await h.ledger.close();
  });

  it('a read after a step and before any write reads in the ledger time before the step', async () => {
    const h = await new Host().open();
    await h.spendAll();
    h.real += MIN;
    h.offset = 3 * H;
    const snap = await h.ledger.peek({ key: 'k', windowMs: H });
    expect(snap.used).toBe(LIMIT);
    expect(snap.now).toBe(h.real);
    expect(h.steps).toEqual([]); // only a write corrects (and reports) a step
    await h.ledger.close();
  });

  it('slewing and sampling below the tolerance is no step', async () => {
    const h = await new Host().open();
    await h.spendAll();
    h.real += MIN;
    h.offset = CLOCK_STEP_TOLERANCE_MS - 1;
    await h.spendAll();
    expect(h.steps).toEqual([]);
    await h.ledger.close();
  });

  it('after a reboot with the clock behind: as if no time had passed (conservative), reported once', async () => {
    const h = await new Host().open();
    expect(await h.spendAll()).toBe(LIMIT);
    await h.ledger.close();
    h.boot = 'boot-2';
    h.real += 5 * MIN;
    h.offset = -2 * H;
    await h.open();
    expect(await h.spendAll()).toBe(0);
    expect(h.steps).toEqual([{ stepMs: -2 * H + 5 * MIN, at: h.real - 2 * H, how: 'reboot' }]);
    // It frees one real hour after the restart at the latest: never more than the window late.
    h.real += H;
    expect(await h.spendAll()).toBe(LIMIT);
    expect(h.maxInAnyRealHour()).toBe(LIMIT);
    await h.ledger.close();
  });

  describe('times a caller gave `record` are never moved', () => {
    const long = { key: 'k2h', limit: LIMIT, windowMs: 2 * H };
    const entry = (id: string) => ({ key: `entry:${id}`, id, request: 'r' });

    it('forward: the entry keeps its time and leaves the window when it would have', async () => {
      const h = new Host();
      h.offset = -H; // the wall clock is an hour behind
      await h.open();
      const start = h.real;
      expect((await h.ledger.spend({ budgets: [long], cost: 40 })).allowed).toBe(true);
      // A journal's spend, 90 real minutes ago: 30 minutes ago on the ledger's slow clock.
      const at = start - 90 * MIN;
      expect(await h.ledger.record({ budgets: [long], cost: 60, entry: entry('j'), at })).toMatchObject({
        outcome: 'recorded',
        at,
      });
      h.real += MIN;
      h.offset = 0; // corrected by an hour
      expect((await h.ledger.spend({ budgets: [long], cost: 1 })).allowed).toBe(false);
      expect(h.steps.map((s) => s.stepMs)).toEqual([H]);
      expect(await h.ledger.peek({ key: long.key, windowMs: long.windowMs })).toMatchObject({
        used: 100,
        oldestAt: at,
        newestAt: start, // the spend's time, moved with the clock
      });
      // Two real hours after it was spent, and not a moment later, its 60 units are free.
      h.real = at + 2 * H - 1;
      expect((await h.ledger.spend({ budgets: [long], cost: 60 })).allowed).toBe(false);
      h.real += 1;
      expect((await h.ledger.spend({ budgets: [long], cost: 60 })).allowed).toBe(true);
      await h.ledger.close();
    });

    it('back: the key keeps its entry until it has left the window', async () => {
      const h = new Host();
      h.offset = H; // the wall clock is an hour ahead
      await h.open();
      const start = h.real;
      const at = start - 20 * MIN;
      expect((await h.ledger.record({ budgets: [long], cost: 30, entry: entry('b'), at })).at).toBe(at);
      h.real += MIN;
      h.offset = 0;
      // Another key's spend corrects the step: every stored time moves back an hour, not this one.
      expect((await h.ledger.spend({ budgets: [budget], cost: 10 })).allowed).toBe(true);
      expect(h.steps.map((s) => s.stepMs)).toEqual([-H]);
      h.real = start + 60 * MIN;
      expect((await h.ledger.peek({ key: long.key, windowMs: long.windowMs })).used).toBe(30);
      h.real = at + 2 * H - 1;
      expect((await h.ledger.spend({ budgets: [long], cost: 71 })).allowed).toBe(false);
      h.real += 1;
      expect((await h.ledger.spend({ budgets: [long], cost: 71 })).allowed).toBe(true);
      await h.ledger.close();
    });
  });

  it('two processes on one file and one clock: the step is corrected and reported once', async () => {
    const a = await new Host().open();
    const bSteps: ClockStep[] = [];
    const b = await openLedger(`sqlite:${a.file}`, {
      now: () => a.real + a.offset,
      monotonic: () => a.real - 1_700_000_000_000,
      bootId: a.boot,
      onClockStep: (s) => bSteps.push(s),
    });
    await a.spendAll();
    a.real += MIN;
    a.offset = 24 * H;
    expect((await b.spend({ budgets: [budget], cost: 10 })).allowed).toBe(false);
    expect((await a.ledger.spend({ budgets: [budget], cost: 10 })).allowed).toBe(false);
    expect(bSteps).toHaveLength(1);
    expect(a.steps).toHaveLength(0);
    await b.close();
    await a.ledger.close();
  });
});
