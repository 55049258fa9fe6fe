/**
 * The compressed-day drill: one whole quota day scaled down in time, run against the simulator by
 * the real scheduler, guard, ledger and cache, then checked.
 *
 * - The simulator's day lasts `daySeconds`, and so does the credential's sliding window; the
 *   schedules are scaled to match (an "hour" is a 24th of the day, rounded to a period node-cron can
 *   tick: 1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 or 60 seconds, or whole minutes dividing an hour).
 * - 8 regional trending jobs every hour, staggered by 2 scaled minutes; the backfill every hour, 20
 *   scaled minutes later (after the last region), with a cache backlog larger than the whole day's
 *   quota, paced over the simulator's day by the guard (`backfill.pace: day`, the default).
 * - A manual burst of `search.list` calls at a third of the day, and "someone else spent 2,000
 *   units of the key" injected at the simulator at mid-day (or when `behindAt` says), behind the
 *   guard's back.
 *
 * Checked at the end: the bucket the backfill spends is used (≥ 0.99 of what was spendable), the
 * upstream answered quotaExceeded at most once before the guard blocked the bucket and never after,
 * the simulator charged exactly what the ledger recorded, and the scheduled jobs were never denied by
 * the budget while the backfill ran (the backfill only took headroom).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openCache } from '../cache/index.js';
import { DEFAULT_REGIONS } from '../config/defaults.js';
import { parseConfig } from '../config/load.js';
import type { Config, CredentialConfig } from '../config/types.js';
import { trendingRuns } from '../cron-runs.js';
import { InvalidArgumentError } from '../errors.js';
import { bucketWindow } from '../guard/keys.js';
import type { GuardEvent, GuardLogger } from '../guard/types.js';
import { jobKind } from '../history/types.js';
import { backfillMethod } from '../job-library/backfill.js';
import type { JobResult } from '../job-library/types.js';
import { openLedger } from '../ledger/index.js';
import type { Ledger, LedgerKind } from '../ledger/types.js';
import type { HttpAddress } from '../metrics/http-address.js';
import {
  getProfile,
  PROFILES,
  type ProfileId,
  profileData,
  type QuotaProfile,
} from '../profiles/profiles.js';
import { type Service, startService } from '../scheduler/service.js';
import { type Simulator, startSimulator } from '../simulator/index.js';

const DAY_SECONDS = 86_400;
/** Cron periods node-cron can tick evenly, in seconds. */
const PERIODS = [
  1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60, 120, 180, 240, 300, 360, 600, 720, 900, 1200, 1800, 3600,
];
const KEY_ENV = 'QG_DRILL_API_KEY';
const CREDENTIAL = 'default';
const PROJECT = 'default';

export interface DrillOptions {
  /** Length of the compressed day in seconds (default 120; at least 24). */
  daySeconds?: number;
  /** The ledger: `sqlite:<path>`, `redis://…` or `redis-cluster://…` (default: a fresh SQLite file). */
  store?: string;
  /** Key prefix on Redis (default: one of its own per drill). */
  keyPrefix?: string;
  /**
   * Quota model: a built-in profile's id or a profile (e.g. one of a config's `profiles`; it must
   * price videos.list and search.list). Default youtube-classic, where the backfill competes with
   * trending for `units`.
   */
  profile?: ProfileId | QuotaProfile;
  /** Daily quota of `units` (and of `videos.batchGetStats` under youtube-2026); default 10,000. */
  quota?: number;
  /** Units someone else spends of the key at mid-day, behind the guard's back (default 20 % of the quota). */
  behind?: number;
  /** When in the day someone else spends them, as a fraction of the day (default 0.5, mid-day). */
  behindAt?: number;
  /** Manual `search.list` calls in the burst (default 5 for a 10,000-unit quota, in proportion to it). */
  burstCalls?: number;
  /** Pages per chart (default 4, the whole chart, for a 10,000-unit quota; in proportion to it, at least 1). */
  maxPages?: number;
  /** Regions (default the 8 defaults). */
  regions?: readonly string[];
  /** Keep the work directory (ledger and cache files) instead of removing it. */
  keep?: boolean;
  /** A line now and then while the day runs. */
  onProgress?: (line: string) => void;
  /** Serve the status page, /metrics and /healthz while the day runs (port 0: any free port). */
  http?: HttpAddress;
  /** Called once the scheduled jobs have started (its `server` is set when `http` was given). */
  onStart?: (service: Service) => void;
}

export interface DrillBucket {
  quota: number;
  reserve: number;
  /** Units charged by the simulator for our requests (refused ones included: it charges them). */
  charged: number;
  /** Units in the ledger's window at the end of the day. */
  recorded: number;
  /** Units of our requests the simulator served (charged less quotaExceeded answers). */
  served: number;
  /** Units someone else spent behind the guard's back. */
  behind: number;
  /** What we could spend: min(quota − reserve, quota − behind). */
  spendable: number;
  utilisation: number;
}

export interface DrillCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface DrillReport {
  ok: boolean;
  store: LedgerKind;
  profile: ProfileId;
  daySeconds: number;
  /** Length of one scaled hour (the cron period) in seconds. */
  hourSeconds: number;
  regions: number;
  maxPages: number;
  burstCalls: number;
  /** The bucket the backfill spends (utilisation is checked on it). */
  backfillBucket: string;
  /** Utilisation of the backfill's bucket: served / spendable. */
  utilisation: number;
  /** quotaExceeded answers the jobs saw before the guard blocked the bucket. */
  upstreamQuotaExceeded: number;
  /** quotaExceeded answers in all (requests already in flight when the block landed included). */
  upstreamQuotaExceededTotal: number;
  /** Spends the ledger allowed on a blocked bucket after the block (must be 0). */
  allowedAfterBlock: number;
  /** Units the simulator charged for our requests, all buckets. */
  chargedUnits: number;
  /** Units the ledger recorded, all buckets. */
  recordedUnits: number;
  /** Scheduled spends the budget denied (not counting the upstream block). */
  scheduledDenied: number;
  /** Scheduled spends denied because the bucket was blocked after the upstream's quotaExceeded. */
  scheduledBlocked: number;
  backfillUnits: number;
  trendingUnits: number;
  manualUnits: number;
  failOpenSpends: number;
  /** Cached videos the backfill had to refresh at the start. */
  backlogVideos: number;
  runs: Record<string, Record<string, number>>;
  skippedTicks: number;
  /** When the upstream blocked the bucket, as a fraction of the day (null when it never did). */
  blockedAtDayFraction: number | null;
  /** When the upstream first answered quotaExceeded (ran dry), as a fraction of the day (null: never). */
  dryAtDayFraction: number | null;
  /** When someone else spent behind the guard's back, as a fraction of the day. */
  behindAtDayFraction: number;
  /** Regional trending runs that completed (`done`) ÷ those the schedule had in the day. */
  trendingRunsCompleted: number;
  trendingRunsDone: number;
  trendingRunsScheduled: number;
  /**
   * The backfill bucket's day, sampled: the fraction of the day, the units the upstream counted
   * (someone else's included), ours, the backfill's, and what its pacing line allowed by then.
   */
  curve: Array<{ f: number; used: number; ours: number; backfill: number | null; line: number | null }>;
  buckets: Record<string, DrillBucket>;
  checks: DrillCheck[];
  elapsedMs: number;
  /** The ledger and cache files, when kept (`keep`). */
  workDir?: string;
}

/** The profile a drill runs: a built-in one by id, or the caller's. */
function drillProfile(p: ProfileId | QuotaProfile): QuotaProfile {
  if (typeof p === 'object') return p;
  const found = getProfile(p);
  if (!found)
    throw new InvalidArgumentError(
      'profile',
      `unknown profile '${p}' (built in: ${Object.keys(PROFILES).join(', ')}; a profile of a config's own: pass --config)`,
    );
  return found;
}

/** The largest period node-cron ticks evenly that fits 24 times in the day. */
export function scaledHourSeconds(daySeconds: number): number {
  const hour = daySeconds / 24;
  let best = 0;
  for (const p of PERIODS) if (p <= hour) best = p;
  if (best === 0) throw new InvalidArgumentError('daySeconds', `must be at least 24 (got ${daySeconds})`);
  return best;
}

function cronEvery(seconds: number): string {
  if (seconds < 60) return `*/${seconds} * * * * *`;
  if (seconds < 3600) return `0 */${seconds / 60} * * * *`;
  return '0 0 * * * *';
}

interface Tally {
  firstBlockAt: number | null;
  firstDryAt: number | null;
  quotaExceededBeforeBlock: number;
  quotaExceededTotal: number;
  allowedAfterBlock: number;
  blocked: Set<string>;
  scheduledDenied: number;
  scheduledBlocked: number;
  manualUnits: number;
  failOpen: number;
}

function tally(): Tally & { on(e: GuardEvent): void } {
  const t: Tally & { on(e: GuardEvent): void } = {
    firstBlockAt: null,
    firstDryAt: null,
    quotaExceededBeforeBlock: 0,
    quotaExceededTotal: 0,
    allowedAfterBlock: 0,
    blocked: new Set(),
    scheduledDenied: 0,
    scheduledBlocked: 0,
    manualUnits: 0,
    failOpen: 0,
    on(e) {
      switch (e.type) {
        case 'upstream-error':
          if (e.error.reason === 'quotaExceeded') {
            t.firstDryAt ??= Date.now();
            t.quotaExceededTotal++;
            if (t.firstBlockAt === null) t.quotaExceededBeforeBlock++;
          }
          break;
        case 'block':
          t.firstBlockAt ??= Date.now();
          t.blocked.add(e.bucket);
          break;
        case 'spend': {
          const o = e.outcome;
          if (o.allowed && t.blocked.has(o.bucket)) t.allowedAfterBlock++;
          if (o.allowed && o.tier === 'manual') t.manualUnits += o.cost;
          if (!o.allowed && o.tier === 'scheduled') {
            if (o.reason === 'blocked') t.scheduledBlocked++;
            else t.scheduledDenied++;
          }
          break;
        }
        case 'refund':
          if (e.outcome.tier === 'manual') t.manualUnits -= e.outcome.cost;
          break;
        case 'fail-open':
          t.failOpen++;
          break;
        default:
          break;
      }
    },
  };
  return t;
}

/** A logger that keeps the last warnings (a drill writes thousands of page lines otherwise). */
function quietLogger(): GuardLogger & { warnings: number; last: string[] } {
  const l = {
    warnings: 0,
    last: [] as string[],
    info: () => undefined,
    warn: (_: object, msg: string) => {
      l.warnings++;
      l.last.push(msg);
      if (l.last.length > 20) l.last.shift();
    },
  };
  return l;
}

function seedBacklog(path: string, videos: number): void {
  fillBacklog(path, videos);
  // Index it now, on today's clock: otherwise the first job runs of the day do, for seconds, and
  // their next ticks are skipped.
  const cache = openCache(path);
  try {
    cache.flush();
    cache.rebuildHotIndex();
  } finally {
    cache.close();
  }
}

function fillBacklog(path: string, videos: number): void {
  // Last refreshed a day ago: all of it is due.
  const cache = openCache(path, { now: () => Date.now() - 86_400_000 });
  try {
    for (let i = 0; i < videos; i += 5_000) {
      const batch = [];
      for (let j = i; j < Math.min(videos, i + 5_000); j++)
        batch.push({ id: `bk${j.toString(36).padStart(9, '0')}` }); // 11 characters, as the upstream's ids
      cache.upsertVideos(batch);
    }
  } finally {
    cache.close();
  }
}

interface Setup {
  config: Config;
  credential: CredentialConfig;
  hourSeconds: number;
  backfillBucket: string;
  backlogVideos: number;
  /** Upstream calls a second the backfill must make to keep its hourly pace. */
  callsPerSecond: number;
}

function drillConfig(
  o: Required<Pick<DrillOptions, 'daySeconds' | 'profile' | 'quota' | 'maxPages'>> & {
    store: string;
    keyPrefix?: string;
    regions: readonly string[];
    cachePath: string;
    baseUrl: string;
    key: string;
  },
): Setup {
  const hourSeconds = scaledHourSeconds(o.daySeconds);
  const scale = o.daySeconds / DAY_SECONDS;
  const profile = drillProfile(o.profile);
  const ownStats = profile.buckets['videos.batchGetStats'] !== undefined;
  const base = (budgets: unknown[]): Config =>
    parseConfig(
      {
        // A drill shows a day's quota, not an outage: a command the store answers late on a busy
        // machine waits for its answer (5 s, as the upstream) instead of failing open after 1 s.
        store: {
          url: o.store,
          commandTimeoutMs: '5s',
          ...(o.keyPrefix !== undefined ? { keyPrefix: o.keyPrefix } : {}),
        },
        cache: { path: o.cachePath },
        upstream: { baseUrl: o.baseUrl, timeout: '5s' },
        credentials: [
          {
            id: CREDENTIAL,
            apiKeyEnv: KEY_ENV,
            profile: profile.id,
            // Two days: the ledger keeps the whole drill day to be read after it, as the simulator does.
            window: `${2 * o.daySeconds}s`,
            buckets: {
              [profile.defaultBucket]: { quota: o.quota },
              // Only the backfill spends its own bucket: it needs no headroom there.
              ...(ownStats ? { 'videos.batchGetStats': { quota: o.quota, backfillHeadroom: 0 } } : {}),
            },
          },
        ],
        budgets,
        // A profile of the caller's own goes in as data, as a config file would define it.
        profiles: Object.hasOwn(PROFILES, profile.id) ? {} : { [profile.id]: profileData(profile) },
        regions: [...o.regions],
        schedules: {
          trending: {
            cron: cronEvery(hourSeconds),
            stagger: `${Math.max(1, Math.round(120_000 * scale))}ms`,
            maxPages: o.maxPages,
            timeZone: 'UTC',
          },
          // 20 scaled minutes after the hour: after the last region's run (8 regions, 2 minutes apart).
          backfill: {
            cron: cronEvery(hourSeconds),
            stagger: `${Math.round(hourSeconds * 1000) / 3}ms`,
            timeZone: 'UTC',
          },
        },
        maxSleep: `${Math.max(10, Math.round(30_000 * scale))}ms`,
        // A scaled hour, as the default hour is for a real day: the backlog and every page trending
        // wrote become due again within the day. The backfill is paced over the day (pace: day).
        backfill: { minAge: `${hourSeconds * 1000}ms` },
      },
      { env: { [KEY_ENV]: o.key } },
    );
  const config = base([]);
  const credential = config.credential(CREDENTIAL);
  const method = backfillMethod(credential);
  const spec = credential.methods[method]!;
  const bucket = credential.buckets[spec.bucket]!;
  // The backfill's paced share of an hour, with room for the burst at the day's end (a quarter more).
  const runsPerDay = Math.floor(o.daySeconds / hourSeconds);
  const perHour = Math.ceil(bucket.ceilings.backfill / (0.8 * runsPerDay));
  // More work than the whole day's quota can pay for.
  const backlogVideos = Math.ceil((1.25 * bucket.quota) / spec.cost) * 50;
  return {
    config,
    credential: config.credential(CREDENTIAL),
    hourSeconds,
    backfillBucket: spec.bucket,
    backlogVideos,
    callsPerSecond: perHour / spec.cost / hourSeconds,
  };
}

/**
 * The most upstream calls a second a drill's backfill can be asked for. The simulator, the ledger,
 * the cache and the jobs share one machine: the 120 s day at 10,000 units (99 calls a second under
 * youtube-2026) passes on 2 cores; a 24 s day at 10,000 (495 a second) reaches about 85 %.
 */
export const MAX_DRILL_CALLS_PER_SECOND = 100;

export interface DrillPace {
  /** Upstream calls a second the backfill must make to keep its hourly pace. */
  callsPerSecond: number;
  /** Whether that is within MAX_DRILL_CALLS_PER_SECOND. */
  feasible: boolean;
  /** The largest quota (a multiple of 100) that is, for this day length (null: none is). */
  maxQuota: number | null;
  /** The shortest day (whole seconds) that is, for this quota (null: none up to a day). */
  minDaySeconds: number | null;
}

/** How fast a drill with these settings must call the upstream, and what would make it feasible. */
export function drillPace(options: Pick<DrillOptions, 'daySeconds' | 'profile' | 'quota'> = {}): DrillPace {
  const daySeconds = options.daySeconds ?? 120;
  const profile = options.profile ?? 'youtube-classic';
  const quota = options.quota ?? 10_000;
  const rate = (day: number, q: number) =>
    drillConfig({
      daySeconds: day,
      profile,
      quota: q,
      maxPages: scaledMaxPages(q),
      store: 'sqlite::memory:',
      regions: ['US'],
      cachePath: ':memory:',
      baseUrl: 'http://127.0.0.1:1/youtube/v3',
      key: 'probe',
    }).callsPerSecond;
  const ok = (day: number, q: number) => rate(day, q) <= MAX_DRILL_CALLS_PER_SECOND;
  const callsPerSecond = rate(daySeconds, quota);
  // The rate grows about in proportion to the quota and falls with the day's length: start the
  // searches near the answer, then step.
  const guess = Math.ceil((quota * MAX_DRILL_CALLS_PER_SECOND) / callsPerSecond / 100) * 100 + 100;
  let maxQuota: number | null = null;
  for (let q = Math.min(Math.floor(quota / 100) * 100, guess); q >= 100; q -= 100)
    if (ok(daySeconds, q)) {
      maxQuota = q;
      break;
    }
  let minDaySeconds: number | null = null;
  for (let day = daySeconds; day <= DAY_SECONDS; day += Math.max(1, Math.floor(day / 100)))
    if (ok(day, quota)) {
      minDaySeconds = day;
      break;
    }
  return {
    callsPerSecond: Math.round(callsPerSecond * 10) / 10,
    feasible: callsPerSecond <= MAX_DRILL_CALLS_PER_SECOND,
    maxQuota,
    minDaySeconds,
  };
}

/** Pages per chart for a quota: the whole chart (4) at 10,000 units, in proportion below, at least 1. */
function scaledMaxPages(quota: number): number {
  return Math.min(4, Math.max(1, Math.round((4 * quota) / 10_000)));
}

const fmt = (n: number) => new Intl.NumberFormat('en-US').format(n);

/** Run one compressed day and check it. Resolves with the report whether the checks pass or not. */
export async function runDrill(options: DrillOptions = {}): Promise<DrillReport> {
  const started = Date.now();
  const s = daySettings(options);
  const dir = mkdtempSync(join(tmpdir(), 'qg-drill-'));
  const open: OpenParts = { sim: undefined, service: undefined, ledger: undefined, timers: [] };
  try {
    const day = await startDay(s, options, dir, open);
    const { sim: simulator, service: svc, ledger, setup, t0, dayMs } = day;
    const { config, credential, hourSeconds, backfillBucket } = setup;
    const burst = scheduleDisturbances(s, day, open.timers);
    const { curve, sample, sampler } = startCurve(day, open.timers);
    const report = setInterval(() => {
      const u = simulator.usage(PROJECT, backfillBucket);
      s.progress(
        `t=${((Date.now() - t0) / 1000).toFixed(0)}s: ${backfillBucket} used upstream ${fmt(u.used)} of ${fmt(u.quota)}; runs ${svc.scheduler.results().length}`,
      );
    }, dayMs / 8);
    open.timers.push(report);

    // Stop just before the day ends, so nothing is spent on the next one. The ledger keeps two days
    // and the simulator's totals are cumulative: both are read after.
    const stopAt = t0 + dayMs - Math.min(100, (hourSeconds * 1000) / 8);
    await sleep(Math.max(0, stopAt - Date.now()));
    clearInterval(report);
    clearInterval(sampler);
    await svc.scheduler.stop('end of the day');
    await burst();
    await sample();

    const { buckets, recordedUnits } = await readBuckets(day, s.behind);
    if (Date.now() >= day.nextResetAt) s.progress('warning: the day ended before the figures were read');

    const results = svc.scheduler.results();
    const sum = (pred: (r: JobResult) => boolean) => results.filter(pred).reduce((n, r) => n + r.units, 0);
    const chargedUnits = simulator.charged({ project: PROJECT });
    const trending = trendingCompletion(config, credential, s.regions, day.serviceStartedAt, stopAt, results);
    const fraction = (at: number | null) =>
      at === null ? null : Math.round(((at - t0) / dayMs) * 1000) / 1000;
    const main = buckets[backfillBucket]!;
    const t = day.tally;
    const checks = drillChecks({ t, trending, main, backfillBucket, chargedUnits, recordedUnits, fraction });
    return {
      ok: checks.every((c) => c.ok),
      store: ledger.kind,
      profile: s.profile.id,
      daySeconds: s.daySeconds,
      hourSeconds,
      regions: s.regions.length,
      maxPages: s.maxPages,
      burstCalls: s.burstCalls,
      backfillBucket,
      utilisation: main.utilisation,
      upstreamQuotaExceeded: t.quotaExceededBeforeBlock,
      upstreamQuotaExceededTotal: t.quotaExceededTotal,
      allowedAfterBlock: t.allowedAfterBlock,
      chargedUnits,
      recordedUnits,
      scheduledDenied: t.scheduledDenied,
      scheduledBlocked: t.scheduledBlocked,
      backfillUnits: sum((r) => r.job === 'backfill'),
      trendingUnits: sum((r) => r.job.startsWith('trending')),
      manualUnits: t.manualUnits,
      failOpenSpends: t.failOpen,
      backlogVideos: setup.backlogVideos,
      runs: runsByKind(results),
      skippedTicks: day.counts.skippedTicks,
      blockedAtDayFraction: fraction(t.firstBlockAt),
      dryAtDayFraction: fraction(t.firstDryAt),
      behindAtDayFraction: s.behindAt,
      trendingRunsCompleted: trending.completed,
      trendingRunsDone: trending.done,
      trendingRunsScheduled: trending.scheduled,
      curve,
      buckets,
      checks,
      elapsedMs: Date.now() - started,
      ...(options.keep ? { workDir: dir } : {}),
    };
  } finally {
    for (const timer of open.timers) clearTimeout(timer);
    // The service closes the ledger; without one it is closed here.
    if (open.service) await open.service.stop('drill over');
    else await open.ledger?.close();
    await open.sim?.close();
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
  }
}

/** A drill's options with their defaults, checked before anything starts. */
interface DaySettings {
  daySeconds: number;
  profile: QuotaProfile;
  quota: number;
  behind: number;
  behindAt: number;
  burstCalls: number;
  maxPages: number;
  regions: readonly string[];
  progress: (line: string) => void;
}

function daySettings(options: DrillOptions): DaySettings {
  const daySeconds = options.daySeconds ?? 120;
  const profile = drillProfile(options.profile ?? 'youtube-classic');
  const quota = options.quota ?? 10_000;
  const behind = options.behind ?? Math.round(quota * 0.2);
  const behindAt = options.behindAt ?? 0.5;
  if (!(behindAt > 0 && behindAt < 1)) throw new InvalidArgumentError('behindAt', 'must be between 0 and 1');
  // The trending and manual load keep their share of the quota when it is scaled down.
  const share = quota / 10_000;
  const burstCalls = options.burstCalls ?? Math.max(1, Math.round(5 * share));
  const maxPages = options.maxPages ?? scaledMaxPages(quota);
  const regions = options.regions ?? DEFAULT_REGIONS;
  const progress = options.onProgress ?? (() => undefined);
  scaledHourSeconds(daySeconds);
  if (!Number.isInteger(quota) || quota < 100)
    throw new InvalidArgumentError('quota', 'must be an integer >= 100');
  // Settings that ask for more calls than the machine can make fail the utilisation check after the
  // whole day: say so before it starts, with what to change.
  const pace = drillPace({ daySeconds, profile, quota });
  if (!pace.feasible) {
    const fixes = [
      ...(pace.maxQuota !== null ? [`--quota ${pace.maxQuota} or less`] : []),
      ...(pace.minDaySeconds !== null ? [`--day-seconds ${pace.minDaySeconds} or more`] : []),
    ];
    throw new InvalidArgumentError(
      'quota',
      `a ${daySeconds} s day at ${fmt(quota)} units (${profile.id}) asks the backfill for ${fmt(pace.callsPerSecond)} upstream calls a second, more than the ${MAX_DRILL_CALLS_PER_SECOND} a drill keeps up with: use ${fixes.join(', or ')}`,
    );
  }
  return { daySeconds, profile, quota, behind, behindAt, burstCalls, maxPages, regions, progress };
}

/** What a drill has open, closed by runDrill whatever failed. */
interface OpenParts {
  sim: Simulator | undefined;
  service: Service | undefined;
  ledger: Ledger | undefined;
  timers: NodeJS.Timeout[];
}

/** A started day: the simulator, the ledger and the scheduled jobs running against them. */
interface Day {
  sim: Simulator;
  service: Service;
  ledger: Ledger;
  setup: Setup;
  /** The start of the simulator's day (its clock). */
  t0: number;
  dayMs: number;
  nextResetAt: number;
  serviceStartedAt: number;
  tally: Tally;
  counts: { skippedTicks: number };
}

/** Seeds the backlog, waits for a tick, starts the simulator, opens the ledger and starts the jobs. */
async function startDay(s: DaySettings, options: DrillOptions, dir: string, open: OpenParts): Promise<Day> {
  const { daySeconds, profile, quota, maxPages, regions, progress } = s;
  const key = `drill-${Math.random().toString(36).slice(2)}`;
  const store = options.store ?? `sqlite:${join(dir, 'ledger.db')}`;
  const redis = /^redis/.test(store);
  const cachePath = join(dir, 'cache.db');
  const ownStats = profile.buckets['videos.batchGetStats'] !== undefined;
  // The backlog is seeded before the day starts (seeding a large cache takes seconds).
  const probe = drillConfig({
    daySeconds,
    profile,
    quota,
    maxPages,
    store,
    regions,
    cachePath,
    baseUrl: 'http://127.0.0.1:1/youtube/v3',
    key,
  });
  progress(`seeding the cache with a backlog of ${fmt(probe.backlogVideos)} videos`);
  seedBacklog(cachePath, probe.backlogVideos);
  // The day starts just after a tick of the schedules (as a calendar day starts at a whole hour),
  // so that its last backfill run comes after its last trending runs, well before its end.
  const periodMs = scaledHourSeconds(daySeconds) * 1000;
  await sleep(Math.ceil(Date.now() / periodMs) * periodMs + 20 - Date.now());

  const sim = await startSimulator({
    port: 0,
    profile,
    quota,
    ...(ownStats ? { buckets: { 'videos.batchGetStats': quota } } : {}),
    dayLengthSec: daySeconds,
    keys: [`${key}@${PROJECT}`],
  });
  open.sim = sim;
  // The day's start as the simulator counts it (it starts counting before it listens): every
  // fraction of the day, and the end of the spend curve, is measured from there.
  const t0 = sim.nextResetAt() - Math.round(daySeconds * 1000);
  const setup = drillConfig({
    daySeconds,
    profile,
    quota,
    maxPages,
    store,
    ...(redis ? { keyPrefix: options.keyPrefix ?? `qg-drill:${t0.toString(36)}:` } : {}),
    regions,
    cachePath,
    baseUrl: sim.url,
    key,
  });
  const s0 = setup.config.store;
  const ledger = await openLedger(s0.url, s0.keyPrefix !== undefined ? { keyPrefix: s0.keyPrefix } : {});
  open.ledger = ledger;
  const t = tally();
  const counts = { skippedTicks: 0 };
  const nextResetAt = sim.nextResetAt();
  const service = await startService({
    config: setup.config,
    ledger,
    logger: quietLogger(),
    nextReset: () => sim.nextResetAt(),
    // The simulator's compressed day is the upstream's day: the backfill's pacing and what it
    // holds back for the rest of the day's scheduled runs are counted over it, not over 24 hours.
    upstreamDay: () => {
      const end = sim.nextResetAt();
      return { start: end - daySeconds * 1000, end };
    },
    onGuardEvent: t.on,
    onEvent: (e) => {
      if (e.type !== 'skip') return;
      counts.skippedTicks++;
      progress(
        `t=${((e.at - t0) / 1000).toFixed(2)}s: tick of ${e.job} skipped, still ${e.why} since t=${((e.since - t0) / 1000).toFixed(2)}s`,
      );
    },
    ...(options.http ? { http: options.http } : {}),
  });
  open.service = service;
  options.onStart?.(service);
  const serviceStartedAt = Date.now();
  progress(
    `day of ${daySeconds}s on ${ledger.kind} (${profile.id}): an hour is ${setup.hourSeconds}s, ${regions.length} regions, backfill on ${setup.backfillBucket}`,
  );
  return {
    sim,
    service,
    ledger,
    setup,
    t0,
    dayMs: daySeconds * 1000,
    nextResetAt,
    serviceStartedAt,
    tally: t,
    counts,
  };
}

/**
 * The manual burst at a third of the day, someone else's spend at `behindAt` of it. Returns what
 * waits for the burst to finish.
 */
function scheduleDisturbances(s: DaySettings, day: Day, timers: NodeJS.Timeout[]): () => Promise<void> {
  const { sim: simulator, service: svc, t0, dayMs } = day;
  let burst: Promise<void> = Promise.resolve();
  timers.push(
    setTimeout(() => {
      burst = (async () => {
        const client = svc.jobs.upstream.get(CREDENTIAL);
        for (let i = 0; i < s.burstCalls; i++) {
          await svc.guard.call(
            { credential: CREDENTIAL, method: 'search.list', tier: 'manual', tag: 'manual:search.list' },
            () => client.searchList({ q: `drill ${i}`, maxResults: 5 }),
          );
        }
        s.progress(
          `t=${((Date.now() - t0) / 1000).toFixed(1)}s: manual burst of ${s.burstCalls} search.list calls`,
        );
      })().catch(() => undefined);
    }, dayMs / 3),
    setTimeout(() => {
      simulator.spendBehind(PROJECT, s.profile.defaultBucket, s.behind);
      s.progress(
        `t=${((Date.now() - t0) / 1000).toFixed(1)}s: someone else spent ${fmt(s.behind)} units behind the guard`,
      );
    }, dayMs * s.behindAt),
  );
  return () => burst;
}

/** The day's spend curve: what the upstream counted on the backfill's bucket, ours, and the line. */
function startCurve(
  day: Day,
  timers: NodeJS.Timeout[],
): { curve: DrillReport['curve']; sample: () => Promise<void>; sampler: NodeJS.Timeout } {
  const { sim: simulator, service: svc, t0, dayMs } = day;
  const { backfillBucket } = day.setup;
  const curve: DrillReport['curve'] = [];
  let sampling = false;
  const sample = async () => {
    if (sampling) return;
    sampling = true;
    try {
      const at = Date.now();
      // A sample taken once the day has ended reads the next day's count: the curve ends with the day.
      // The upstream's count is read at once, before awaiting the ledger: on a busy machine the await
      // can outlast the day's end, and a count read after it would be the next day's.
      if (at - t0 >= dayMs) return;
      const u = simulator.usage(PROJECT, backfillBucket);
      const line = await svc.guard.pacingLine(CREDENTIAL, backfillBucket, at).catch(() => undefined);
      curve.push({
        f: Math.round(((at - t0) / dayMs) * 1000) / 1000,
        used: u.used,
        ours: u.used - u.spentBehind,
        backfill: line?.spentToday ?? null,
        line: line?.allowed ?? null,
      });
    } finally {
      sampling = false;
    }
  };
  const sampler = setInterval(() => void sample(), dayMs / 96);
  timers.push(sampler);
  return { curve, sample, sampler };
}

/** Each bucket's figures: what the simulator charged and served, what the ledger recorded. */
async function readBuckets(
  day: Day,
  behind: number,
): Promise<{ buckets: Record<string, DrillBucket>; recordedUnits: number }> {
  const { sim: simulator, ledger } = day;
  const { credential } = day.setup;
  const buckets: Record<string, DrillBucket> = {};
  let recordedUnits = 0;
  for (const b of Object.values(credential.buckets)) {
    const w = bucketWindow(credential, b, Date.now());
    const recorded = (await ledger.peek({ key: w.key, windowMs: w.windowMs })).used;
    const charged = simulator.charged({ project: PROJECT, bucket: b.id });
    const refused = simulator.requests
      .filter((r) => r.project === PROJECT && r.bucket === b.id && r.reason === 'quotaExceeded')
      .reduce((n, r) => n + r.cost, 0);
    // Read from what was spent, not from the simulator's day, which may have ended by now.
    const spentBehind = b.id === 'units' ? behind : 0;
    const spendable = Math.min(b.ceilings.scheduled, b.quota - spentBehind);
    const served = charged - refused;
    buckets[b.id] = {
      quota: b.quota,
      reserve: b.reserve,
      charged,
      recorded,
      served,
      behind: spentBehind,
      spendable,
      utilisation: spendable > 0 ? Math.round((served / spendable) * 10_000) / 10_000 : 0,
    };
    recordedUnits += recorded;
  }
  return { buckets, recordedUnits };
}

/** Job runs by kind (`trending`, `backfill`) and outcome. */
function runsByKind(results: readonly JobResult[]): Record<string, Record<string, number>> {
  const runs: Record<string, Record<string, number>> = {};
  for (const r of results) {
    const kind = jobKind(r.job);
    const byOutcome = runs[kind] ?? {};
    byOutcome[r.outcome] = (byOutcome[r.outcome] ?? 0) + 1;
    runs[kind] = byOutcome;
  }
  return runs;
}

interface TrendingCompletion {
  scheduled: number;
  done: number;
  completed: number;
}

/**
 * Every region's run of the ticks the schedule had between the start of the service and the end of
 * the day (a tick before the service started ran no region), against the runs that completed.
 */
function trendingCompletion(
  config: Config,
  credential: CredentialConfig,
  regions: readonly string[],
  serviceStartedAt: number,
  stopAt: number,
  results: readonly JobResult[],
): TrendingCompletion {
  const { ticks } = trendingRuns(config, credential, serviceStartedAt, stopAt);
  const stagger = config.schedules.trending.staggerMs;
  const scheduled = ticks.reduce(
    (n, tick) => n + regions.filter((_, i) => tick + i * stagger < stopAt).length,
    0,
  );
  const done = results.filter((r) => r.job.startsWith('trending') && r.outcome === 'done').length;
  const completed = scheduled > 0 ? Math.round((done / scheduled) * 1000) / 1000 : 1;
  return { scheduled, done, completed };
}

function drillChecks(f: {
  t: Tally;
  trending: TrendingCompletion;
  main: DrillBucket;
  backfillBucket: string;
  chargedUnits: number;
  recordedUnits: number;
  fraction: (at: number | null) => number | null;
}): DrillCheck[] {
  const { t, trending, main, backfillBucket, chargedUnits, recordedUnits, fraction } = f;
  return [
    {
      name: 'trendingRunsCompleted',
      ok: trending.completed >= 0.97,
      detail: `${trending.done} of ${trending.scheduled} regional trending runs completed (${(trending.completed * 100).toFixed(1)} %, target ≥ 97 %); the upstream ran dry at ${t.firstDryAt === null ? 'no point' : `${((fraction(t.firstDryAt) ?? 0) * 100).toFixed(1)} %`} of the day`,
    },
    {
      name: 'utilisation',
      ok: main.utilisation >= 0.99,
      detail: `${backfillBucket}: ${fmt(main.served)} units served of ${fmt(main.spendable)} spendable (${(main.utilisation * 100).toFixed(2)} %, target ≥ 99 %)`,
    },
    {
      name: 'upstreamQuotaExceeded',
      ok: t.quotaExceededBeforeBlock <= 1 && t.allowedAfterBlock === 0,
      detail: `${t.quotaExceededBeforeBlock} quotaExceeded before the guard blocked the bucket (at most 1), ${t.allowedAfterBlock} spends allowed after the block (must be 0)`,
    },
    {
      name: 'chargedEqualsRecorded',
      ok: chargedUnits === recordedUnits,
      detail: `the simulator charged ${fmt(chargedUnits)} units, the ledger recorded ${fmt(recordedUnits)}`,
    },
    {
      name: 'scheduledDenied',
      ok: t.scheduledDenied === 0,
      detail: `${t.scheduledDenied} scheduled spends denied by the budget while the backfill ran (must be 0); ${t.scheduledBlocked} denied by the upstream block`,
    },
    {
      name: 'noFailOpen',
      ok: t.failOpen === 0,
      detail: `${t.failOpen} spends let through unrecorded`,
    },
  ];
}
