/**
 * The simulator's charge log by minute: every unit it charged (served requests and spend behind the
 * guard's back alike), by project, bucket and method label, in the minute it was charged. Cloud
 * Monitoring's usage series are built from it. Minutes are counted from each upstream day's start;
 * a compressed day has 1,440 of them like a real one, each `dayLength / 1440` long.
 */
import type { DayClock } from './quota.js';

/** One series: a project's use of one bucket by one method label, minute start → units. */
export interface UsageSeries {
  project: string;
  bucket: string;
  method: string;
  minutes: ReadonlyMap<number, number>;
}

/** Minutes in a day; a compressed day keeps them, only shorter. */
export const MINUTES_PER_DAY = 1440;

export class UsageMinutes {
  readonly #series = new Map<string, UsageSeries & { minutes: Map<number, number> }>();
  readonly #day: DayClock;
  /** How long a minute is, in ms. */
  readonly minuteMs: number;

  constructor(day: DayClock) {
    this.#day = day;
    this.minuteMs =
      day.model.kind === 'fixed' ? Math.max(1, Math.round(day.model.lengthMs / MINUTES_PER_DAY)) : 60_000;
  }

  /** The start of the minute `at` falls in. */
  minuteOf(at: number): number {
    const { start } = this.#day.at(at);
    return start + Math.floor((at - start) / this.minuteMs) * this.minuteMs;
  }

  record(project: string, bucket: string, method: string, units: number, at: number): void {
    if (units === 0) return;
    const key = `${project}\u0000${bucket}\u0000${method}`;
    let s = this.#series.get(key);
    if (!s) {
      s = { project, bucket, method, minutes: new Map() };
      this.#series.set(key, s);
    }
    const m = this.minuteOf(at);
    s.minutes.set(m, (s.minutes.get(m) ?? 0) + units);
  }

  /** A project's series, in the order they were first charged. */
  of(project: string): UsageSeries[] {
    return [...this.#series.values()].filter((s) => s.project === project);
  }
}
