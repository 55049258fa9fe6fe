/**
 * The scheduler behind `quota-guard run`: one cron schedule per job (node-cron, explicit time zone),
 * each job started `offsetMs` after its tick so that regional bursts interleave, never two runs of
 * the same job at once (a tick that finds its job still running, or still waiting for its offset, is
 * skipped and logged), and a graceful stop: no more ticks, pending starts cancelled, running jobs
 * aborted (their requests in flight abandoned, or finished when asked) and awaited.
 *
 * A tick skipped because its job was still running is owed to the job if that run then ends
 * `stopped`: it starts again at the skipped tick's own start (tick + offset) or when the stop says
 * it can resume, whichever is later, unless its next tick comes first: a long run (the backfill
 * following its pacing line for hours) that stops just after a skipped tick does not idle until the
 * next one, which after the day's last tick is the rest of the day.
 *
 * The ticks come from a `TickSource`: node-cron by default, or any other clock (tests, drills).
 */
import type { Logger as CronLogger } from 'node-cron';
import { InvalidArgumentError } from '../errors.js';
import type { GuardLogger } from '../guard/types.js';
import { nodeCron } from '../time-libs.js';
import type { JobResult } from '../youtube/job-library/types.js';

export interface ScheduledJob {
  /** Unique: `trending:US`, `backfill`. */
  name: string;
  cron: string;
  timeZone: string;
  /** The job starts this long after each tick (stagger). */
  offsetMs: number;
  /**
   * One run. It must end soon after `signal` aborts (at its next page boundary); `inFlight` aborts
   * the request in flight too (it aborts with `signal`, unless the scheduler is stopped with
   * `finishInFlight`).
   */
  run(signal: AbortSignal, inFlight: AbortSignal): Promise<JobResult>;
}

/** Where ticks come from. `schedule` calls `onTick` at every time the expression matches. */
export interface TickSource {
  schedule(job: ScheduledJob, onTick: (at: Date) => void): { stop(): void };
}

export type SchedulerEvent =
  | { type: 'tick'; job: string; at: number }
  | { type: 'start'; job: string; at: number }
  | { type: 'skip'; job: string; at: number; why: 'running' | 'pending'; since: number }
  | { type: 'finish'; job: string; at: number; result: JobResult }
  | { type: 'error'; job: string; at: number; error: unknown };

export interface SchedulerOptions {
  jobs: readonly ScheduledJob[];
  logger: GuardLogger;
  /** Every tick, start, skip, finish and error (metrics, tests). Must not throw. */
  onEvent?: (e: SchedulerEvent) => void;
  /** Default: node-cron. */
  ticks?: TickSource;
  /** The clock for event times (default `Date.now`). */
  now?: () => number;
}

/** node-cron as a tick source; its own warnings go to our logger. */
export function cronTicks(logger: GuardLogger): TickSource {
  const cronLogger: CronLogger = {
    info: (m) => logger.info({ source: 'node-cron' }, m),
    warn: (m) => logger.warn({ source: 'node-cron' }, m),
    error: (m) => logger.warn({ source: 'node-cron' }, String(m)),
    debug: () => undefined,
  };
  return {
    schedule(job, onTick) {
      const task = nodeCron().createTask(job.cron, (ctx) => onTick(ctx.date), {
        timezone: job.timeZone,
        name: job.name,
        logger: cronLogger,
      });
      void task.start();
      return { stop: () => void task.destroy() };
    },
  };
}

interface Running {
  since: number;
  done: Promise<void>;
}

interface Pending {
  timer: NodeJS.Timeout;
  since: number;
  /** A run owed for a tick skipped while the job ran: the job's next tick replaces it. */
  owed?: true;
}

export class Scheduler {
  readonly #jobs: readonly ScheduledJob[];
  readonly #logger: SchedulerOptions['logger'];
  readonly #onEvent: ((e: SchedulerEvent) => void) | undefined;
  readonly #ticks: TickSource;
  readonly #now: () => number;
  readonly #abort = new AbortController();
  readonly #abortInFlight = new AbortController();
  readonly #running = new Map<string, Running>();
  readonly #pending = new Map<string, Pending>();
  /** The last tick each running job skipped. */
  readonly #skipped = new Map<string, number>();
  readonly #handles: Array<{ stop(): void }> = [];
  readonly #results: JobResult[] = [];
  #state: 'idle' | 'started' | 'stopping' | 'stopped' = 'idle';
  #stopping: Promise<void> | undefined;

  constructor(opts: SchedulerOptions) {
    const names = new Set<string>();
    for (const j of opts.jobs) {
      if (names.has(j.name)) throw new InvalidArgumentError('jobs', `two jobs named '${j.name}'`);
      names.add(j.name);
    }
    this.#jobs = opts.jobs;
    this.#logger = opts.logger;
    this.#onEvent = opts.onEvent;
    this.#ticks = opts.ticks ?? cronTicks(opts.logger);
    this.#now = opts.now ?? Date.now;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Jobs running now. */
  running(): string[] {
    return [...this.#running.keys()];
  }

  /** Results of every finished run since start, in finishing order. */
  results(): readonly JobResult[] {
    return this.#results;
  }

  start(): void {
    if (this.#state !== 'idle') return;
    this.#state = 'started';
    for (const job of this.#jobs) this.#handles.push(this.#ticks.schedule(job, () => this.#tick(job)));
    this.#logger.info(
      {
        jobs: this.#jobs.map((j) => ({
          job: j.name,
          cron: j.cron,
          timeZone: j.timeZone,
          offsetMs: j.offsetMs,
        })),
      },
      `scheduler started: ${this.#jobs.length} job${this.#jobs.length === 1 ? '' : 's'}`,
    );
  }

  /** A tick of `job`'s schedule: start it after its offset, unless it is still running or pending. */
  #tick(job: ScheduledJob): void {
    if (this.#state !== 'started') return;
    const at = this.#now();
    this.#emit({ type: 'tick', job: job.name, at });
    let pending = this.#pending.get(job.name);
    if (pending?.owed) {
      clearTimeout(pending.timer);
      this.#pending.delete(job.name);
      pending = undefined;
    }
    const running = this.#running.get(job.name);
    if (running) this.#skipped.set(job.name, at);
    if (pending || running) {
      const why = running ? 'running' : 'pending';
      const since = running?.since ?? pending!.since;
      this.#logger.warn(
        { job: job.name, why, since: new Date(since).toISOString() },
        `tick skipped: ${job.name} is still ${running ? 'running' : 'waiting for its offset'} (since ${new Date(since).toISOString()})`,
      );
      this.#emit({ type: 'skip', job: job.name, at, why, since });
      return;
    }
    if (job.offsetMs <= 0) {
      this.#startRun(job);
      return;
    }
    const timer = setTimeout(() => {
      this.#pending.delete(job.name);
      this.#startRun(job);
    }, job.offsetMs);
    this.#pending.set(job.name, { timer, since: at });
  }

  /** Start `job` now (also used by `runNow`). Returns false when it is already running. */
  #startRun(job: ScheduledJob): boolean {
    if (this.#state !== 'started' || this.#running.has(job.name)) return false;
    const since = this.#now();
    this.#emit({ type: 'start', job: job.name, at: since });
    const done = (async () => {
      let result: JobResult | undefined;
      try {
        result = await job.run(this.#abort.signal, this.#abortInFlight.signal);
        this.#results.push(result);
        this.#emit({ type: 'finish', job: job.name, at: this.#now(), result });
      } catch (error) {
        // A bug in a job: say so loudly, keep the other schedules going.
        (this.#logger.error ?? this.#logger.warn).call(
          this.#logger,
          {
            job: job.name,
            err: error instanceof Error ? { message: error.message, stack: error.stack } : String(error),
          },
          `${job.name} failed with an internal error`,
        );
        this.#emit({ type: 'error', job: job.name, at: this.#now(), error });
      } finally {
        this.#running.delete(job.name);
        this.#startOwed(job, result);
      }
    })();
    this.#running.set(job.name, { since, done });
    return true;
  }

  /** After a run: the tick it made skip, when it ended stopped, starts once the stop allows it. */
  #startOwed(job: ScheduledJob, result: JobResult | undefined): void {
    const tick = this.#skipped.get(job.name);
    this.#skipped.delete(job.name);
    if (tick === undefined || result?.outcome !== 'stopped' || this.#state !== 'started') return;
    const at = Math.max(tick + job.offsetMs, result.resumeAt ?? 0);
    const timer = setTimeout(
      () => {
        this.#pending.delete(job.name);
        this.#startRun(job);
      },
      Math.max(0, at - this.#now()),
    );
    this.#pending.set(job.name, { timer, since: tick, owed: true });
    this.#logger.info(
      { job: job.name, skipped: new Date(tick).toISOString(), at: new Date(at).toISOString() },
      `${job.name} ended stopped after skipping its tick of ${new Date(tick).toISOString()}: that tick's run starts at ${new Date(at).toISOString()}, or at the next tick if it comes first`,
    );
  }

  /** Run a job now, outside its schedule (same no-overlap rule). False when it is already running. */
  runNow(name: string): boolean {
    const job = this.#jobs.find((j) => j.name === name);
    if (!job) throw new InvalidArgumentError('name', `the scheduler has no job named '${name}'`);
    return this.#startRun(job);
  }

  /** Resolves when no job is running (new ticks may start more). */
  async idle(): Promise<void> {
    while (this.#running.size) await Promise.all([...this.#running.values()].map((r) => r.done));
  }

  /**
   * Graceful stop: no more ticks, pending starts cancelled, running jobs aborted (each abandons its
   * request in flight, never half-writes its page) and awaited. With `finishInFlight`, running jobs
   * start no new request but finish the one in flight and write its page: nothing is spent that
   * the upstream did not see. Safe to call twice (the first call's way holds).
   */
  stop(reason = 'stop requested', options: { finishInFlight?: boolean } = {}): Promise<void> {
    this.#stopping ??= this.#stop(reason, options.finishInFlight === true);
    return this.#stopping;
  }

  async #stop(reason: string, finishInFlight: boolean): Promise<void> {
    const wasStarted = this.#state === 'started';
    this.#state = 'stopping';
    for (const h of this.#handles.splice(0)) h.stop();
    for (const p of this.#pending.values()) clearTimeout(p.timer);
    this.#pending.clear();
    this.#skipped.clear();
    const running = this.running();
    if (wasStarted)
      this.#logger.info(
        { reason, running },
        running.length
          ? `stopping (${reason}): waiting for ${running.join(', ')} to end (${finishInFlight ? 'the request in flight is finished and its page written' : 'the request in flight is abandoned, its page not written'})`
          : `stopping (${reason})`,
      );
    this.#abort.abort();
    if (!finishInFlight) this.#abortInFlight.abort();
    await this.idle();
    this.#abortInFlight.abort();
    this.#state = 'stopped';
    if (wasStarted) this.#logger.info({}, 'scheduler stopped');
  }

  #emit(e: SchedulerEvent): void {
    try {
      this.#onEvent?.(e);
    } catch {
      // An observer's bug must not stop the schedules.
    }
  }
}
