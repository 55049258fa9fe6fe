/**
 * The simulator's own quota: units used per project and bucket in the current upstream day, plus
 * running totals of what it charged. The day ends at midnight in the profile's time zone
 * (America/Los_Angeles, daylight saving included) or, for drills, every `dayLengthMs` after an
 * origin.
 */
import { nextMidnight, startOfDay } from '../../calendar-day.js';

export type DayModel =
  | { kind: 'zone'; timeZone: string }
  | { kind: 'fixed'; lengthMs: number; originMs: number };

export interface DaySpan {
  /** Epoch ms when the current day started. */
  start: number;
  /** Epoch ms of the next reset. */
  end: number;
}

export class DayClock {
  #span: DaySpan = { start: 0, end: 0 };
  constructor(readonly model: DayModel) {}

  /** The day containing `now` (cached until it ends, so the common case costs two comparisons). */
  at(now: number): DaySpan {
    if (now >= this.#span.start && now < this.#span.end) return this.#span;
    if (this.model.kind === 'zone') {
      this.#span = {
        start: startOfDay(this.model.timeZone, now),
        end: nextMidnight(this.model.timeZone, now),
      };
    } else {
      const { lengthMs, originMs } = this.model;
      const start = originMs + Math.floor((now - originMs) / lengthMs) * lengthMs;
      this.#span = { start, end: start + lengthMs };
    }
    return this.#span;
  }
}

export interface BucketUsage {
  quota: number;
  /** Units used today: charged requests plus spend behind the guard's back. */
  used: number;
  remaining: number;
  /** Units charged for requests served, since the simulator started (all days). */
  charged: number;
  /** Units spent behind the guard's back, since the simulator started. */
  spentBehind: number;
}

interface Cell {
  used: number;
  charged: number;
  behind: number;
}

export class QuotaBook {
  readonly #cells = new Map<string, Map<string, Cell>>();
  #dayStart = Number.NEGATIVE_INFINITY;

  readonly #quotas: Readonly<Record<string, number>>;
  readonly day: DayClock;

  constructor(quotas: Readonly<Record<string, number>>, day: DayClock) {
    this.#quotas = quotas;
    this.day = day;
  }

  quotaOf(bucket: string): number {
    return this.#quotas[bucket] ?? 0;
  }

  buckets(): string[] {
    return Object.keys(this.#quotas);
  }

  #cell(project: string, bucket: string): Cell {
    let p = this.#cells.get(project);
    if (!p) {
      p = new Map();
      this.#cells.set(project, p);
    }
    let c = p.get(bucket);
    if (!c) {
      c = { used: 0, charged: 0, behind: 0 };
      p.set(bucket, c);
    }
    return c;
  }

  /** Starts a new day when `now` has crossed midnight: every project's usage goes back to 0. */
  roll(now: number): void {
    const { start } = this.day.at(now);
    if (start === this.#dayStart) return;
    this.#dayStart = start;
    for (const p of this.#cells.values()) for (const c of p.values()) c.used = 0;
  }

  /** Whether `cost` more units fit in the bucket today. */
  fits(project: string, bucket: string, cost: number, now: number): boolean {
    this.roll(now);
    return this.#cell(project, bucket).used + cost <= this.quotaOf(bucket);
  }

  /** Charges a served request. */
  charge(project: string, bucket: string, cost: number, now: number): void {
    this.roll(now);
    const c = this.#cell(project, bucket);
    c.used += cost;
    c.charged += cost;
  }

  /** Someone else spent the project's quota. */
  spendBehind(project: string, bucket: string, units: number, now: number): void {
    this.roll(now);
    const c = this.#cell(project, bucket);
    c.used += units;
    c.behind += units;
  }

  usage(project: string, bucket: string, now: number): BucketUsage {
    this.roll(now);
    const c = this.#cells.get(project)?.get(bucket) ?? { used: 0, charged: 0, behind: 0 };
    const quota = this.quotaOf(bucket);
    return {
      quota,
      used: c.used,
      remaining: Math.max(0, quota - c.used),
      charged: c.charged,
      spentBehind: c.behind,
    };
  }

  /** Units charged for served requests since start, optionally for one project and/or bucket. */
  charged(filter: { project?: string; bucket?: string } = {}): number {
    let sum = 0;
    for (const [project, p] of this.#cells) {
      if (filter.project !== undefined && project !== filter.project) continue;
      for (const [bucket, c] of p) {
        if (filter.bucket !== undefined && bucket !== filter.bucket) continue;
        sum += c.charged;
      }
    }
    return sum;
  }

  projects(): string[] {
    return [...this.#cells.keys()];
  }
}
