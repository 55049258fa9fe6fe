/**
 * When a cron schedule runs, as epoch ms, and how much a set of runs can spend in a window.
 *
 * node-cron parses the expression and decides whether a day matches (its own `match`, so day-of-month
 * and day-of-week rules mean exactly what they mean to the scheduler); the times within a day come
 * from the parsed fields, laid out with Luxon in the schedule's time zone so that daylight-saving days
 * (23 or 25 hours) are counted as the scheduler will run them. Both are loaded on the first call
 * (time-libs.ts), not with this module.
 */

import type { DateTime } from 'luxon';
import type { createTask } from 'node-cron';
import type { Config, CredentialConfig } from '../config/types.js';
import { InvalidArgumentError } from '../errors.js';
import { luxon, nodeCron } from '../time-libs.js';
import { youtubeConfig } from './config/resolver.js';
import type { YouTubeConfig } from './config/types.js';
import { trendingMethod, trendingUnits, youtubeConfigured } from './trending-spend.js';

const DAY_MS = 86_400_000;
/** Runs enumerated for one schedule at most (a schedule every second over 8 days is 691,200). */
const MAX_RUNS = 2_000_000;

/** A spend at one instant: `units` at `at` (epoch ms). */
export interface Spend {
  at: number;
  units: number;
}

/** Epoch ms of every run of `cron` (in `timeZone`) within [fromMs, toMs), in order. */
export function cronRuns(cron: string, timeZone: string, fromMs: number, toMs: number): number[] {
  const { parse, createTask } = nodeCron();
  let fields: ReturnType<typeof parse>;
  try {
    fields = parse(cron);
  } catch (e) {
    throw new InvalidArgumentError('cron', `'${cron}' is not a valid cron expression`, { cause: e });
  }
  // Checked before the task exists: node-cron fails even to destroy a task whose zone is unknown.
  if (!luxon().DateTime.fromMillis(fromMs, { zone: timeZone }).isValid) {
    throw new InvalidArgumentError('timeZone', `unknown time zone '${timeZone}'`);
  }
  // Only `match` is used: the task is never started, so it holds no timer. node-cron keeps every
  // task it creates in a process-wide registry until it is destroyed: without the `finally`, a
  // long-lived process (`serve` renders the status page with it) kept one per call, for good.
  const task = createTask(cron, () => undefined, { timezone: timeZone });
  try {
    return runsOf(task, fields, cron, timeZone, fromMs, toMs);
  } finally {
    void task.destroy();
  }
}

function runsOf(
  task: ReturnType<typeof createTask>,
  fields: { hour: number[]; minute: number[]; second: number[] },
  cron: string,
  timeZone: string,
  fromMs: number,
  toMs: number,
): number[] {
  const { DateTime } = luxon();
  const { hour: hours, minute: minutes, second: seconds } = fields;
  const perDay = hours.length * minutes.length * seconds.length;
  const out: number[] = [];
  let day = DateTime.fromMillis(fromMs, { zone: timeZone }).startOf('day');
  if (!day.isValid) throw new InvalidArgumentError('timeZone', `unknown time zone '${timeZone}'`);
  while (day.toMillis() < toMs) {
    const start = day.toMillis();
    const next = day.plus({ days: 1 }).startOf('day');
    if (dayMatches(task, day, hours, minutes, seconds)) {
      if (out.length + perDay > MAX_RUNS) {
        throw new InvalidArgumentError('cron', `'${cron}' runs too often to be planned (over ${MAX_RUNS})`);
      }
      const uniform = next.toMillis() - start === DAY_MS;
      for (const h of hours)
        for (const m of minutes)
          for (const s of seconds) {
            if (uniform) {
              push(out, start + (h * 3600 + m * 60 + s) * 1000, fromMs, toMs);
              continue;
            }
            // A daylight-saving day: a local time may not exist (skipped) or exist twice (both run).
            const t = DateTime.fromObject(
              { year: day.year, month: day.month, day: day.day, hour: h, minute: m, second: s },
              { zone: timeZone },
            );
            if (t.hour !== h || t.minute !== m) continue;
            push(out, t.toMillis(), fromMs, toMs);
            for (const again of [t.minus({ hours: 1 }), t.plus({ hours: 1 })])
              if (again.hour === h && again.minute === m && again.day === day.day)
                push(out, again.toMillis(), fromMs, toMs);
          }
    }
    day = next;
  }
  return out.sort((a, b) => a - b);
}

function push(out: number[], t: number, fromMs: number, toMs: number): void {
  if (t >= fromMs && t < toMs) out.push(t);
}

/** Whether node-cron runs on this day at all: probe one of its run times that exists that day. */
function dayMatches(
  task: ReturnType<typeof createTask>,
  day: DateTime,
  hours: number[],
  minutes: number[],
  seconds: number[],
): boolean {
  for (const h of hours) {
    const t = day.set({ hour: h, minute: minutes[0] ?? 0, second: seconds[0] ?? 0, millisecond: 0 });
    if (t.hour === h) return task.match(new Date(t.toMillis()));
  }
  return false;
}

/** The most units spent within any `windowMs` (a sliding window) by `spends`, sorted by time. */
export function maxInWindow(
  spends: readonly Spend[],
  windowMs: number,
  lastStart = Number.POSITIVE_INFINITY,
): number {
  let best = 0;
  let sum = 0;
  let j = 0;
  for (let i = 0; i < spends.length; i++) {
    const s = spends[i]!;
    if (s.at > lastStart) break;
    while (j < spends.length && spends[j]!.at < s.at + windowMs) sum += spends[j++]!.units;
    best = Math.max(best, sum);
    sum -= s.units;
  }
  return best;
}

/** The most units spent within one calendar day of `timeZone`, over the whole days in [fromMs, toMs). */
export function maxInDay(spends: readonly Spend[], timeZone: string, fromMs: number, toMs: number): number {
  const { DateTime } = luxon();
  const byDay = new Map<number, number>();
  for (const s of spends) {
    const start = DateTime.fromMillis(s.at, { zone: timeZone }).startOf('day');
    if (start.toMillis() < fromMs || start.plus({ days: 1 }).toMillis() > toMs) continue;
    byDay.set(start.toMillis(), (byDay.get(start.toMillis()) ?? 0) + s.units);
  }
  let best = 0;
  for (const v of byDay.values()) best = Math.max(best, v);
  return best;
}

/** Merge several time-sorted spend lists into one. */
function mergeSpends(lists: ReadonlyArray<readonly Spend[]>): Spend[] {
  return lists.flat().sort((a, b) => a.at - b.at);
}

/** A config's trending runs on one credential: every region's, staggered. */
export interface TrendingRuns {
  /** The bucket they spend (that of `videos.list`). */
  bucket: string;
  /** One spend per region run starting in [fromMs, toMs), at most its units, sorted by time. */
  spends: Spend[];
  /** The cron schedule's own ticks in [fromMs, toMs), before any stagger. */
  ticks: number[];
  /** Units one run of each region spends at most: charts × pages × the cost of `videos.list`. */
  perRegion: number[];
}

/**
 * The trending runs `plan` counts and the guard holds units back for: region i runs `i × stagger`
 * after each tick of `schedules.trending.cron` and spends at most its charts × `maxPages` pages.
 */
export function trendingRuns(
  config: YouTubeConfig,
  credential: CredentialConfig,
  fromMs: number,
  toMs: number,
): TrendingRuns {
  const t = config.schedules.trending;
  const list = trendingMethod(credential);
  const perRegion = config.regions.map((r) => trendingUnits(config, credential, r));
  const lastStagger = Math.max(0, config.regions.length - 1) * t.staggerMs;
  const ticks = cronRuns(t.cron, t.timeZone, fromMs - lastStagger, toMs);
  const spends = mergeSpends(
    config.regions.map((_, i) =>
      ticks
        .map((at) => ({ at: at + i * t.staggerMs, units: perRegion[i]! }))
        .filter((s) => s.at >= fromMs && s.at < toMs),
    ),
  );
  return { bucket: list.bucket, spends, ticks: ticks.filter((at) => at >= fromMs), perRegion };
}

/**
 * What the schedules of a config run over an upstream day, as the guard's pacing takes it
 * (`ScheduledNeed`, src/guard/pacing.ts): the trending runs of the jobs' credential (the first)
 * on the bucket of `videos.list`, and the backfill's run starts. Nothing is scheduled for a config
 * that does not run the application (`youtubeConfigured`).
 */
export function scheduledNeed(
  config: Config,
): (
  credential: CredentialConfig,
  start: number,
  end: number,
) => { scheduled: Map<string, Spend[]>; backfill: number[] } {
  if (!youtubeConfigured(config)) return () => ({ scheduled: new Map(), backfill: [] });
  const yt = youtubeConfig(config);
  return (credential, start, end) => {
    const scheduled = new Map<string, Spend[]>();
    // Only the jobs' credential runs the schedules.
    if (config.credentials[0]?.id === credential.id) {
      const t = trendingRuns(yt, credential, start, end);
      scheduled.set(t.bucket, t.spends);
    }
    const b = yt.schedules.backfill;
    const backfill = cronRuns(b.cron, b.timeZone, start - b.staggerMs, end)
      .map((at) => at + b.staggerMs)
      .filter((at) => at >= start && at < end);
    return { scheduled, backfill };
  };
}
