/**
 * A drill's day before it starts: its settings checked, its profile and config scaled to the day,
 * the cache's backlog, and how fast the backfill must call the upstream (`drillPace`).
 */

import { InvalidArgumentError } from '../errors.js';
import {
  getProfile,
  PROFILES,
  type ProfileId,
  profileData,
  type QuotaProfile,
} from '../profiles/profiles.js';
import { openCache } from '../youtube/cache/index.js';
import { parseYouTubeConfig } from '../youtube/config/part.js';
import type { YouTubeConfig } from '../youtube/config/types.js';
import { DEFAULT_REGIONS } from '../youtube/defaults.js';
import { backfillMethod } from '../youtube/job-library/backfill.js';
import type { DaySettings, DrillOptions, Setup } from './types.js';

export const DAY_SECONDS = 86_400;

/** Cron periods node-cron can tick evenly, in seconds. */
const PERIODS = [
  1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60, 120, 180, 240, 300, 360, 600, 720, 900, 1200, 1800, 3600,
];

export const KEY_ENV = 'QG_DRILL_API_KEY';
export const CREDENTIAL = 'default';
export const PROJECT = 'default';

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

export function seedBacklog(path: string, videos: number): void {
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

export function drillConfig(
  o: Required<Pick<DrillOptions, 'daySeconds' | 'profile' | 'quota' | 'maxPages'>> & {
    store: string;
    keyPrefix?: string;
    regions: readonly string[];
    cachePath: string;
    baseUrl: string;
    key: string;
    /** With the reconcile (drill --reconcile): the credential names its project, the lag scaled. */
    reconcile?: { lagMs: number; monitoringUrl: string };
  },
): Setup {
  const hourSeconds = scaledHourSeconds(o.daySeconds);
  const scale = o.daySeconds / DAY_SECONDS;
  const profile = drillProfile(o.profile);
  const ownStats = profile.buckets['videos.batchGetStats'] !== undefined;
  const document = (budgets: unknown[]): Record<string, unknown> => ({
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
        ...(o.reconcile ? { project: PROJECT } : {}),
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
    ...(o.reconcile
      ? { reconcile: { lag: o.reconcile.lagMs, monitoring: { baseUrl: o.reconcile.monitoringUrl } } }
      : {}),
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
  });
  const base = (budgets: unknown[]): YouTubeConfig =>
    parseYouTubeConfig(document(budgets), { env: { [KEY_ENV]: o.key } });
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
    document: document([]),
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

export const fmt = (n: number) => new Intl.NumberFormat('en-US').format(n);

export function daySettings(options: DrillOptions): DaySettings {
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
