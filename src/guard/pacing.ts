/**
 * What the guard holds back from the backfill and how fast it lets it spend, over the upstream's day.
 *
 * - **Scheduled need** (dynamic headroom): the units today's remaining scheduled runs will spend on a
 *   bucket. The guard does not know the schedules: whoever runs them passes a `ScheduledNeed` (the
 *   YouTube application's is `scheduledNeed(config)` in src/youtube/cron-runs.ts: each region's trending runs,
 *   staggered, × the pages they fetch × the cost of `videos.list`, the computation `plan` makes).
 *   Without one, nothing is scheduled and the backfill's line is lifted only at midnight. The
 *   backfill's ceiling on the bucket is then
 *   `min(quota − reserve − backfillHeadroom, quota − reserve − scheduled need)`.
 * The paced tier is the one whose value says `paced` (src/config/tiers.ts: `backfill`); how it is
 * paced is `config.pacing` (the YouTube application sets it from its `backfill:` section).
 *
 * - **Pacing** (`backfill.pace: day`): the backfill's allowance for the day is what it has spent
 *   today plus what will be left under its own ceiling once the rest of today's scheduled runs have
 *   spent their need; by a fraction f of the time from the start of the day to its last backfill run
 *   it may have spent at most f of that allowance (its fair share of what is left for the time that
 *   is left, recomputed at every spend). The need is counted in the allowance, not only in the
 *   ceiling, so a scheduled run spending what was held back for it leaves the line where it was
 *   (once its need stops counting, `maxSleep` after its start; a denial meanwhile waits for that).
 *   Counted only in the ceiling, each trending page would lower the line, and a backfill on its
 *   line would find itself above it by more than it may sleep, and stop: after the day's last
 *   backfill tick, for the rest of the day. Where the backfill shares its bucket with scheduled
 *   runs, a tenth of the allowance is held back as well, so that someone spending the key unseen
 *   empties it after the day's scheduled runs, not before them. At the day's last backfill run the
 *   line is lifted: use it or lose it (the scheduled need is still held back).
 *
 * The day's backfill spend is counted in a log of its own, `qg:{<credential>}:<bucket>:backfill:<day>`,
 * spent in the same atomic call as the bucket with the line as its limit.
 */

import { nextMidnight, startOfDay } from '../calendar-day.js';
import { DEFAULT_TIER, PACED_TIER } from '../config/tiers.js';
import type { BucketConfig, Config, CredentialConfig, PacingConfig } from '../config/types.js';
import type { Ledger } from '../ledger/types.js';
import { bucketKey, bucketWindow } from './keys.js';

/** A spend at one instant: at most `units` from `at` (epoch ms). */
export interface ScheduledSpend {
  at: number;
  units: number;
}

/** The runs the schedules make over one upstream day [start, end). */
export interface ScheduledDay {
  /** Each bucket's scheduled runs (not the backfill's): start and most units, sorted by time. */
  scheduled: ReadonlyMap<string, readonly ScheduledSpend[]>;
  /** The backfill's run starts, sorted (its line is lifted at the last one). */
  backfill: readonly number[];
}

/** What the schedules run on a credential's buckets over [start, end): the guard's scheduled need. */
export type ScheduledNeed = (credential: CredentialConfig, start: number, end: number) => ScheduledDay;

/** No schedule: nothing held back for scheduled runs, the backfill's line lifted at midnight. */
const NOTHING_SCHEDULED: ScheduledNeed = () => ({ scheduled: new Map(), backfill: [] });

/** How the paced tier is paced when the config says nothing: the day's line, the scheduled need held back. */
export const DEFAULT_PACING: PacingConfig = { mode: { kind: 'day' }, holdScheduled: true };

/** The ceiling the paced tier has on a bucket before the scheduled need is held back. */
function pacedCeiling(bucket: BucketConfig): number {
  return PACED_TIER ? bucket.ceilings[PACED_TIER.id] : bucket.ceilings[DEFAULT_TIER];
}

/** The share of the day's allowance held back until the day's scheduled runs have started. */
export const PACE_HOLD_BACK = 0.1;

/** Where the upstream's day containing a moment starts and ends (epoch ms). */
export interface UpstreamDay {
  start: number;
  end: number;
}

export type DayOf = (timeZone: string, nowMs: number) => UpstreamDay;

/** The upstream's calendar day in `timeZone`. */
export const calendarDay: DayOf = (timeZone, nowMs) => ({
  start: startOfDay(timeZone, nowMs),
  end: nextMidnight(timeZone, nowMs),
});

/** The backfill's line on one bucket at one moment. */
export interface PacingLine {
  credential: string;
  bucket: string;
  /** `day`, `none`, or `budget <id>` (a narrower budget paces it instead). */
  pace: string;
  /** The upstream day (epoch ms). */
  dayStart: number;
  dayEnd: number;
  /** Units today's remaining scheduled runs will spend on the bucket (held back from the backfill). */
  scheduledNeed: number;
  /** Scheduled runs left today on the bucket. */
  scheduledRunsLeft: number;
  /** The backfill's ceiling on the bucket now: min(backfill ceiling, scheduled ceiling − scheduled need). */
  ceiling: number;
  /** Units the bucket holds in its window now. */
  used: number;
  /** Epoch ms until which the bucket is blocked (after an upstream quotaExceeded). */
  blockedUntil?: number;
  /** Units the backfill spent on the bucket today. */
  spentToday: number;
  /**
   * spentToday + what will be left under the backfill's own ceiling once today's remaining scheduled
   * runs have spent their need: the most the backfill can spend today.
   */
  allowance: number;
  /** The share of the allowance held back until `burstFrom`. */
  holdBack: number;
  /** From when the line is lifted (epoch ms). */
  burstFrom: number;
  /** Units the backfill may have spent today by `at` (null when not paced by the day). */
  allowed: number | null;
  at: number;
}

/**
 * Units the line allows by `t`, for the same allowance: it rises linearly from the start of the day
 * to the day's last backfill run (`burstFrom`, the last time the backfill can spend today), where it
 * jumps to the whole allowance.
 */
export function pacingLineAt(p: PacingLine, t: number): number {
  if (t >= p.burstFrom) return p.allowance;
  const f = Math.min(1, Math.max(0, (t - p.dayStart) / (p.burstFrom - p.dayStart)));
  return Math.floor(p.allowance * f * (1 - p.holdBack));
}

/** The ledger key of the backfill's spend on a bucket during the upstream day starting at `dayStart`. */
export function backfillDayKey(credential: string, bucket: string, dayStart: number): string {
  return `${bucketKey(credential, bucket)}:backfill:${new Date(dayStart).toISOString()}`;
}

/** The schedules' runs of one upstream day, with the day's bounds. */
export interface DaySchedule extends ScheduledDay {
  start: number;
  end: number;
}

/**
 * Knows the schedules of one config and answers, per bucket and moment, the backfill's ceiling and
 * pacing line. The runs of a day are computed once and kept.
 */
export class BackfillPacer {
  readonly #config: Config;
  readonly #dayOf: DayOf;
  readonly #need: ScheduledNeed;
  readonly #days = new Map<string, DaySchedule>();

  constructor(config: Config, dayOf: DayOf = calendarDay, need: ScheduledNeed = NOTHING_SCHEDULED) {
    this.#config = config;
    this.#dayOf = dayOf;
    this.#need = need;
  }

  /** The scheduled and backfill runs of the upstream day containing `nowMs`. */
  day(credential: CredentialConfig, nowMs: number): DaySchedule {
    const { start, end } = this.#dayOf(credential.timeZone, nowMs);
    const id = `${credential.id}@${start}`;
    let day = this.#days.get(id);
    if (day) return day;
    day = { start, end, ...this.#need(credential, start, end) };
    if (this.#days.size > 8) this.#days.clear();
    this.#days.set(id, day);
    return day;
  }

  /**
   * The scheduled need on `bucket` at `nowMs`: runs starting from `nowMs − graceMs` (a run that has
   * just started may not have spent yet) to the end of the day.
   */
  scheduledNeed(
    credential: CredentialConfig,
    bucket: BucketConfig,
    nowMs: number,
  ): { units: number; runs: number; lastRunAt: number | undefined; day: DaySchedule } {
    const day = this.day(credential, nowMs);
    const runs = day.scheduled.get(bucket.id) ?? [];
    const from = (this.#config.pacing ?? DEFAULT_PACING).holdScheduled
      ? nowMs - this.#config.maxSleepMs
      : Number.POSITIVE_INFINITY;
    let units = 0;
    let n = 0;
    for (const r of runs)
      if (r.at >= from) {
        units += r.units;
        n++;
      }
    return { units, runs: n, lastRunAt: runs.at(-1)?.at, day };
  }

  /** ms from the line's moment until the next scheduled run on its bucket no longer counts as need. */
  untilNeedDrops(line: PacingLine): number {
    const next = this.#needDrops(line)[0];
    return next !== undefined ? next.at - line.at : Math.max(1, line.dayEnd - line.at);
  }

  /**
   * ms from the line's moment until it allows `cost` more units, if nothing else is spent meanwhile:
   * it rises with the time and, as the day's scheduled runs start, by the need it stops holding back
   * (a run that spent quickly leaves the line low only until its need drops). At most until the line
   * is lifted.
   */
  untilLineAllows(line: PacingLine, cost: number): number {
    const toBurst = Math.max(1, line.burstFrom - line.at);
    const bucket = this.#config.credential(line.credential).buckets[line.bucket];
    if (bucket === undefined) return toBurst;
    const target = line.spentToday + cost;
    const span = Math.max(1, line.burstFrom - line.dayStart);
    let need = line.scheduledNeed;
    let from = line.at;
    for (const drop of [...this.#needDrops(line), { at: line.burstFrom, units: 0 }]) {
      const until = Math.min(drop.at, line.burstFrom);
      const allowance = line.spentToday + Math.max(0, bucket.ceilings.backfill - need - line.used);
      const perMs = (allowance * (1 - line.holdBack)) / span;
      if (perMs > 0) {
        // The first ms at which floor(allowance × f × (1 − holdBack)) reaches the target.
        const when = Math.max(from, line.dayStart + Math.ceil(target / perMs));
        if (when < until) return Math.max(1, when - line.at);
      }
      if (until >= line.burstFrom) break;
      need -= drop.units;
      from = until;
    }
    return toBurst;
  }

  /** When each run still counted in the line's need stops counting (its start + the grace + 1 ms). */
  #needDrops(line: PacingLine): ScheduledSpend[] {
    if (!(this.#config.pacing ?? DEFAULT_PACING).holdScheduled) return [];
    const credential = this.#config.credential(line.credential);
    const runs = this.day(credential, line.at).scheduled.get(line.bucket) ?? [];
    const grace = this.#config.maxSleepMs;
    return runs.filter((r) => r.at + grace >= line.at).map((r) => ({ at: r.at + grace + 1, units: r.units }));
  }

  /** The backfill's ceiling on the bucket now, without reading the ledger. */
  ceiling(credential: CredentialConfig, bucket: BucketConfig, nowMs: number): number {
    const need = this.scheduledNeed(credential, bucket, nowMs).units;
    return Math.max(0, Math.min(pacedCeiling(bucket), bucket.ceilings[DEFAULT_TIER] - need));
  }

  /** The pacing line at `nowMs`, read from the ledger (the bucket's log and the day's backfill log). */
  async line(
    ledger: Ledger,
    credential: CredentialConfig,
    bucket: BucketConfig,
    nowMs: number,
  ): Promise<PacingLine> {
    const need = this.scheduledNeed(credential, bucket, nowMs);
    const { day } = need;
    const ceiling = Math.max(0, Math.min(pacedCeiling(bucket), bucket.ceilings[DEFAULT_TIER] - need.units));
    const w = bucketWindow(credential, bucket, nowMs);
    // Read before each paced spend: the totals only (on Redis, no walk of the day's entries).
    const [bucketSnap, daySnap] = await Promise.all([
      ledger.peek({ key: w.key, windowMs: w.windowMs, totalsOnly: true }),
      ledger.peek({
        key: backfillDayKey(credential.id, bucket.id, day.start),
        windowMs: day.end - day.start,
        totalsOnly: true,
      }),
    ]);
    const shared = need.lastRunAt !== undefined;
    // Lifted at the day's last backfill run (none today: never): what it leaves is lost at midnight.
    const burstFrom = day.backfill.at(-1) ?? day.end;
    // Never more than the ceiling leaves now (cb − need ≤ min(cb, cs − need)).
    const allowance = daySnap.used + Math.max(0, pacedCeiling(bucket) - need.units - bucketSnap.used);
    const pace = (this.#config.pacing ?? DEFAULT_PACING).mode;
    const p: PacingLine = {
      credential: credential.id,
      bucket: bucket.id,
      pace: pace.kind === 'budget' ? `budget ${pace.budget}` : pace.kind,
      dayStart: day.start,
      dayEnd: day.end,
      scheduledNeed: need.units,
      scheduledRunsLeft: need.runs,
      ceiling,
      used: bucketSnap.used,
      ...(bucketSnap.blockedUntil !== undefined ? { blockedUntil: bucketSnap.blockedUntil } : {}),
      spentToday: daySnap.used,
      allowance,
      holdBack: shared ? PACE_HOLD_BACK : 0,
      burstFrom,
      allowed: null,
      at: nowMs,
    };
    if (pace.kind === 'day') p.allowed = pacingLineAt(p, nowMs);
    return p;
  }
}
