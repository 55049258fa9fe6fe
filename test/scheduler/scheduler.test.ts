import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type ScheduledJob,
  Scheduler,
  type SchedulerEvent,
  type TickSource,
} from '../../src/scheduler/index.js';
import type { JobResult } from '../../src/youtube/job-library/types.js';
import { capture } from '../guard/helpers.js';

/** A clock we move by hand: `tick(name)` fires one job's schedule, `tickAll()` every one. */
class ManualTicks implements TickSource {
  readonly handlers = new Map<string, () => void>();
  schedule(job: ScheduledJob, onTick: (at: Date) => void) {
    this.handlers.set(job.name, () => onTick(new Date()));
    return { stop: () => this.handlers.delete(job.name) };
  }
  tick(name: string): void {
    this.handlers.get(name)?.();
  }
  tickAll(): void {
    for (const h of [...this.handlers.values()]) h();
  }
}

function result(job: string, startedAt: number, outcome: JobResult['outcome'] = 'done'): JobResult {
  return {
    job,
    credential: 'default',
    outcome,
    exitCode: outcome === 'done' ? 0 : 75,
    pages: 1,
    units: 1,
    failOpenUnits: 0,
    items: 50,
    videos: 50,
    labels: {},
    startedAt,
    finishedAt: Date.now(),
  };
}

/** A job that records when it started and finishes when `release()` is called, after `holdMs`, or at once. */
function fakeJob(
  name: string,
  offsetMs: number,
  opts: { hold?: boolean; holdMs?: number; cron?: string } = {},
) {
  const starts: number[] = [];
  let active = 0;
  let maxActive = 0;
  const waiting: Array<() => void> = [];
  const job: ScheduledJob & { starts: number[]; release(): void; maxActive(): number } = {
    name,
    cron: opts.cron ?? '0 * * * *',
    timeZone: 'UTC',
    offsetMs,
    starts,
    maxActive: () => maxActive,
    release: () => {
      for (const w of waiting.splice(0)) w();
    },
    async run(signal) {
      const t = Date.now();
      starts.push(t);
      active++;
      maxActive = Math.max(maxActive, active);
      try {
        if (opts.hold) {
          await new Promise<void>((resolve) => {
            waiting.push(resolve);
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
        }
        if (opts.holdMs) await sleep(opts.holdMs);
        return result(name, t, signal.aborted ? 'aborted' : 'done');
      } finally {
        active--;
      }
    },
  };
  return job;
}

const MIN = 60_000;

/** A job that runs until `stop(resumeInMs)` ends it stopped (resuming then) or `finish()` ends it done. */
function stoppingJob(name: string, offsetMs: number) {
  const starts: number[] = [];
  let active = 0;
  let maxActive = 0;
  let end: ((r: Partial<JobResult>) => void) | undefined;
  const job: ScheduledJob & {
    starts: number[];
    stop(resumeInMs: number): void;
    finish(): void;
    maxActive(): number;
  } = {
    name,
    cron: '0 * * * *',
    timeZone: 'UTC',
    offsetMs,
    starts,
    maxActive: () => maxActive,
    stop: (ms) => end?.({ outcome: 'stopped', exitCode: 75, resumeAt: Date.now() + ms }),
    finish: () => end?.({}),
    async run(signal) {
      const t = Date.now();
      starts.push(t);
      maxActive = Math.max(maxActive, ++active);
      const how = await new Promise<Partial<JobResult>>((resolve) => {
        end = resolve;
        signal.addEventListener('abort', () => resolve({ outcome: 'aborted' }), { once: true });
      });
      active--;
      return { ...result(name, t), ...how };
    },
  };
  return job;
}

const schedulers: Scheduler[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(schedulers.splice(0).map((s) => s.stop()));
});

function scheduler(jobs: ScheduledJob[], ticks?: TickSource) {
  const log = capture();
  const events: SchedulerEvent[] = [];
  const s = new Scheduler({ jobs, logger: log, onEvent: (e) => events.push(e), ...(ticks ? { ticks } : {}) });
  schedulers.push(s);
  return { s, log, events };
}

describe('scheduler on a fake clock', () => {
  it('starts each region its stagger after the tick, in order', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(Date.parse('2026-01-15T10:00:00Z'));
    const ticks = new ManualTicks();
    const jobs = ['US', 'GB', 'DE', 'FR'].map((r, i) => fakeJob(`trending:${r}`, i * 120_000));
    const { s } = scheduler(jobs, ticks);
    s.start();
    const t0 = Date.now();
    ticks.tickAll();
    await vi.advanceTimersByTimeAsync(0);
    expect(jobs.map((j) => j.starts.length)).toEqual([1, 0, 0, 0]);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(jobs.map((j) => j.starts.length)).toEqual([1, 1, 0, 0]);
    await vi.advanceTimersByTimeAsync(240_000);
    expect(jobs.map((j) => j.starts[0]! - t0)).toEqual([0, 120_000, 240_000, 360_000]);
    await s.idle();
    expect(s.results().map((r) => r.job)).toEqual([
      'trending:US',
      'trending:GB',
      'trending:DE',
      'trending:FR',
    ]);
  });

  it('skips and logs a tick that finds its job still running, and runs it again once it is done', async () => {
    const ticks = new ManualTicks();
    const us = fakeJob('trending:US', 0, { hold: true });
    const gb = fakeJob('trending:GB', 0);
    const { s, log, events } = scheduler([us, gb], ticks);
    s.start();
    ticks.tickAll();
    await sleep(10);
    ticks.tickAll(); // US still running: skipped; GB done already: runs again
    await sleep(10);
    expect(us.starts).toHaveLength(1);
    expect(gb.starts).toHaveLength(2);
    expect(events.filter((e) => e.type === 'skip')).toMatchObject([{ job: 'trending:US', why: 'running' }]);
    expect(
      log.lines.find((l) => l.msg.startsWith('tick skipped: trending:US is still running')),
    ).toBeDefined();
    us.release();
    await s.idle();
    ticks.tick('trending:US');
    await sleep(10);
    us.release();
    await s.idle();
    expect(us.starts).toHaveLength(2);
    expect(us.maxActive()).toBe(1);
  });

  it('skips a tick while the previous one still waits for its offset', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const ticks = new ManualTicks();
    const late = fakeJob('trending:CA', 90_000);
    const { s, events } = scheduler([late], ticks);
    s.start();
    ticks.tickAll();
    await vi.advanceTimersByTimeAsync(60_000);
    ticks.tickAll();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(late.starts).toHaveLength(1);
    expect(events.filter((e) => e.type === 'skip')).toMatchObject([{ job: 'trending:CA', why: 'pending' }]);
  });

  it('starts the run of a tick skipped while its job ran once that run ends stopped, when the stop allows', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(Date.parse('2026-01-15T10:00:00Z'));
    const ticks = new ManualTicks();
    const job = stoppingJob('backfill', 20 * MIN);
    const { s, log } = scheduler([job], ticks);
    s.start();
    const t0 = Date.now();
    const since = () => job.starts.map((t) => (t - t0) / MIN);
    ticks.tickAll(); // 10:00, the run starts at 10:20
    await vi.advanceTimersByTimeAsync(60 * MIN);
    ticks.tickAll(); // 11:00: still running, skipped
    await vi.advanceTimersByTimeAsync(5 * MIN);
    job.stop(30_000); // 11:05: stopped, may resume at 11:05:30
    await vi.advanceTimersByTimeAsync(MIN);
    expect(since()).toEqual([20]);
    // The skipped tick's run starts at its own time, 11:20, not at the stop's resume time.
    await vi.advanceTimersByTimeAsync(14 * MIN);
    expect(since()).toEqual([20, 80]);
    expect(log.lines.some((l) => l.msg.startsWith('backfill ended stopped after skipping its tick'))).toBe(
      true,
    );
    // Stopped again with no tick skipped meanwhile: no run until the next tick.
    job.stop(MIN);
    await vi.advanceTimersByTimeAsync(30 * MIN);
    expect(since()).toEqual([20, 80]);
    ticks.tickAll(); // 11:50, the run starts at 12:10
    await vi.advanceTimersByTimeAsync(20 * MIN);
    ticks.tickAll(); // 12:10: running, skipped
    // Stopped until 12:40, after the skipped tick's own start (12:30): it starts at 12:40.
    job.stop(30 * MIN);
    await vi.advanceTimersByTimeAsync(30 * MIN - 1);
    expect(since()).toEqual([20, 80, 130]);
    await vi.advanceTimersByTimeAsync(1);
    expect(since()).toEqual([20, 80, 130, 160]);
    expect(job.maxActive()).toBe(1);
  });

  it('owes nothing to a run that ended done, and lets the next tick replace a run it owes', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const ticks = new ManualTicks();
    const job = stoppingJob('backfill', 0);
    const { s } = scheduler([job], ticks);
    s.start();
    ticks.tickAll();
    ticks.tickAll(); // skipped
    job.finish();
    await vi.advanceTimersByTimeAsync(60 * MIN);
    expect(job.starts).toHaveLength(1);
    ticks.tickAll();
    ticks.tickAll(); // skipped
    job.stop(120 * MIN); // owed in two hours
    await vi.advanceTimersByTimeAsync(60 * MIN);
    ticks.tickAll(); // the next tick runs at once and the owed run is dropped
    await vi.advanceTimersByTimeAsync(0);
    expect(job.starts).toHaveLength(3);
    job.finish();
    await vi.advanceTimersByTimeAsync(120 * MIN);
    expect(job.starts).toHaveLength(3);
    expect(job.maxActive()).toBe(1);
  });

  it('stops gracefully: no more ticks or pending starts, running jobs aborted and awaited', async () => {
    const ticks = new ManualTicks();
    const running = fakeJob('backfill', 0, { hold: true });
    const pending = fakeJob('trending:US', 60_000);
    const { s, events } = scheduler([running, pending], ticks);
    s.start();
    ticks.tickAll();
    await sleep(5);
    expect(s.running()).toEqual(['backfill']);
    await s.stop('test');
    expect(s.running()).toEqual([]);
    expect(s.results()).toMatchObject([{ job: 'backfill', outcome: 'aborted' }]);
    expect(ticks.handlers.size).toBe(0);
    ticks.tickAll();
    await sleep(5);
    expect(pending.starts).toHaveLength(0);
    expect(events.filter((e) => e.type === 'start').map((e) => e.job)).toEqual(['backfill']);
  });

  it('keeps the other schedules going when a job throws', async () => {
    const ticks = new ManualTicks();
    const bad: ScheduledJob = {
      name: 'trending:US',
      cron: '* * * * *',
      timeZone: 'UTC',
      offsetMs: 0,
      run: () => Promise.reject(new Error('boom')),
    };
    const good = fakeJob('trending:GB', 0);
    const { s, events, log } = scheduler([bad, good], ticks);
    s.start();
    ticks.tickAll();
    await s.idle();
    ticks.tickAll();
    await s.idle();
    expect(good.starts).toHaveLength(2);
    expect(events.filter((e) => e.type === 'error')).toHaveLength(2);
    expect(log.lines.some((l) => l.msg === 'trending:US failed with an internal error')).toBe(true);
  });
});

describe('a scheduler misused', () => {
  it('refuses two jobs of one name and runs no unknown job, with typed errors', () => {
    expect(() => new Scheduler({ jobs: [fakeJob('a', 0), fakeJob('a', 0)], logger: capture() })).toThrow(
      expect.objectContaining({ code: 'QG_INVALID_ARGUMENT', field: 'jobs' }),
    );
    const { s } = scheduler([fakeJob('a', 0)]);
    expect(() => s.runNow('b')).toThrow(
      expect.objectContaining({
        code: 'QG_INVALID_ARGUMENT',
        message: "name: the scheduler has no job named 'b'",
      }),
    );
  });
});

describe('scheduler on node-cron with a short cron expression', () => {
  it('ticks every second, staggers, and never runs a job twice at once', async () => {
    // A job that lasts longer than its period: every other tick finds it running.
    const slow = fakeJob('backfill', 0, { cron: '* * * * * *', holdMs: 1_500 });
    const a = fakeJob('trending:US', 0, { cron: '* * * * * *' });
    const b = fakeJob('trending:GB', 400, { cron: '* * * * * *' });
    const { s, events } = scheduler([slow, a, b]);
    s.start();
    const deadline = Date.now() + 20_000;
    while ((a.starts.length < 3 || events.every((e) => e.type !== 'skip')) && Date.now() < deadline)
      await sleep(100);
    await s.stop();
    expect(a.starts.length).toBeGreaterThanOrEqual(3);
    // GB starts 400 ms after US on the same tick (allowing for a loaded machine).
    const gaps = b.starts.map((t) => t - (a.starts.filter((x) => x <= t).at(-1) ?? 0));
    expect(gaps.length).toBeGreaterThan(0);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(350);
    expect(slow.maxActive()).toBe(1);
    expect(events.some((e) => e.type === 'skip' && e.job === 'backfill')).toBe(true);
  });
});
