/**
 * What `status` shows, computed from the ledger: per credential and bucket the quota, reserve,
 * used and remaining for each tier, blocks and why, when the next 1 / 50 / 100 units free up, and
 * spend in the window by tag, region and method. Shared by the CLI and the metrics.
 */
import { DEFAULT_TIER, TIERS, type Tier } from '../config/tiers.js';
import type { BucketConfig, Config, CredentialConfig } from '../config/types.js';
import type { Ledger, Snapshot } from '../ledger/types.js';
import { explainLedgerError } from './explain.js';
import { bucketWindow, budgetKey, paceKey } from './keys.js';
import { BackfillPacer, type ScheduledNeed } from './pacing.js';
import { parseTag, siteOf } from './tags.js';

export const FREES_UP_AMOUNTS = [1, 50, 100] as const;

export interface BudgetStatus {
  id: string;
  limit: number;
  windowMs: number;
  used: number;
  remaining: number;
  tiers?: readonly Tier[];
  methods?: readonly string[];
}

export interface BucketStatus {
  id: string;
  quota: number;
  reserve: number;
  backfillHeadroom: number;
  /** `sliding` or `upstream-day`. */
  window: 'sliding' | 'upstream-day';
  windowMs: number;
  /** The ledger key of the log in use now. */
  key: string;
  /** upstream-day: when the whole budget frees (the upstream's next midnight), ISO. */
  resetsAt: string | null;
  used: number;
  calls: number;
  ceilings: Record<Tier, number>;
  /** Units left under each tier's ceiling in the bucket (0 while blocked). */
  remaining: Record<Tier, number>;
  /**
   * What each tier can really spend now: `remaining`, less the pace and every narrower budget that
   * covers the tier on all of the bucket's methods.
   */
  spendable: Record<Tier, number>;
  /** Per tier, the pace or budget that holds `spendable` below `remaining` (null when none does). */
  spendableLimitedBy: Record<Tier, string | null>;
  blockedUntil: string | null;
  blockedReason: string | null;
  /**
   * ms until the next N units spent in the window free up (N = 1, 50, 100; when fewer than N are
   * spent, until all of them do); null when unknown.
   */
  freesUpInMs: Record<string, number | null>;
  /**
   * ms until the scheduled tier can spend N units (N = 1, 50, 100): 0 when it can now; else the later
   * of when enough units age out and when a block lifts; null when N is above its ceiling. The pace
   * and narrower budgets are not counted (`spendableLimitedBy` names them). What `next 100` shows.
   */
  spendableInMs: Record<string, number | null>;
  /**
   * Units left per tier under its ceiling and every narrower budget, not the pace, as if no block
   * held the bucket: the figure the metrics export as `units_remaining`, which a block must not
   * bend (an alert extrapolating it would see a cliff and a jump).
   */
  unitsLeft: Record<Tier, number>;
  byTag: Record<string, number>;
  byRegion: Record<string, number>;
  byMethod: Record<string, number>;
  /**
   * The window's spend by who spent: the tag's first part (`trending`, `backfill`, `spend`, or the
   * decision API's token name, which it puts first in every tag).
   */
  bySite: Record<string, number>;
  /**
   * What of the window's spend was written late (`Ledger.record`: a journal replayed, the guard's or
   * a client's through `POST /v1/record`): units, entries, and when the oldest was spent (ISO).
   */
  recordedLate: { units: number; entries: number; oldestAt: string | null };
  pace: BudgetStatus | null;
  budgets: BudgetStatus[];
  /** The backfill on this bucket now: what is held back for today's scheduled runs, and its pacing line. */
  backfill: BackfillStatus;
}

export interface BackfillStatus {
  /** Units the rest of today's scheduled runs need on the bucket (held back from the backfill). */
  scheduledNeed: number;
  /** Scheduled runs left today on the bucket. */
  scheduledRunsLeft: number;
  /** The backfill's ceiling now: min(backfill ceiling, scheduled ceiling − scheduledNeed). */
  ceiling: number;
  /** `day`, `none` or `budget <id>` (backfill.pace). */
  pace: string;
  /** Units the backfill spent on the bucket today (the upstream's day). */
  spentToday: number;
  /** Units the pacing line allows by now (null unless paced by the day). */
  allowedByNow: number | null;
  /** When the line is lifted for the day's-end burst (ISO). */
  burstFrom: string;
}

export interface CredentialStatus {
  id: string;
  profile: string;
  timeZone: string;
  /** The latest block over the credential's buckets (ISO), null when none is blocked. */
  blockedUntil: string | null;
  buckets: BucketStatus[];
}

export interface StatusReport {
  /** The store's clock (ISO). */
  at: string;
  store: string;
  credentials: CredentialStatus[];
}

function add(into: Record<string, number>, key: string, units: number): void {
  into[key] = (into[key] ?? 0) + units;
}

async function bucketStatus(
  ledger: Ledger,
  credential: CredentialConfig,
  bucket: BucketConfig,
  nowMs: number,
  pacer: BackfillPacer,
): Promise<BucketStatus & { blockedAt?: number; storeNow: number }> {
  const w = bucketWindow(credential, bucket, nowMs);
  const line = await pacer.line(ledger, credential, bucket, nowMs);
  const snap: Snapshot = await ledger.peek({ key: w.key, windowMs: w.windowMs });
  const late = await ledger.late({ key: w.key, windowMs: w.windowMs });
  const now = snap.now;
  const [freesUp, spendableIn] = await freesUpIn(ledger, w, bucket, snap);
  const { byRegion, byMethod, bySite } = spendSplit(snap, credential);
  const remaining = Object.fromEntries(
    (Object.entries(bucket.ceilings) as Array<[Tier, number]>).map(([tier, ceiling]) => [
      tier,
      snap.blockedUntil !== undefined ? 0 : Math.max(0, ceiling - snap.used),
    ]),
  ) as Record<Tier, number>;
  const pace = await paceStatus(ledger, credential, bucket);
  const budgets = await budgetStatuses(ledger, credential, bucket);
  const { spendable, spendableLimitedBy } = spendableByTier(credential, bucket, remaining, pace, budgets);
  const unblocked = Object.fromEntries(
    (Object.entries(bucket.ceilings) as Array<[Tier, number]>).map(([tier, c]) => [
      tier,
      Math.max(0, c - snap.used),
    ]),
  ) as Record<Tier, number>;
  const unitsLeft = spendableByTier(credential, bucket, unblocked, null, budgets).spendable;
  const blockLiftsIn = snap.blockedUntil !== undefined ? Math.max(0, snap.blockedUntil - now) : 0;

  return {
    id: bucket.id,
    quota: bucket.quota,
    reserve: bucket.reserve,
    backfillHeadroom: bucket.backfillHeadroom,
    window: bucket.window.kind,
    windowMs: w.windowMs,
    key: w.key,
    resetsAt: w.resetsAt !== undefined ? new Date(w.resetsAt).toISOString() : null,
    used: snap.used,
    calls: snap.calls,
    ceilings: { ...bucket.ceilings },
    remaining,
    spendable,
    spendableLimitedBy,
    blockedUntil: snap.blockedUntil !== undefined ? new Date(snap.blockedUntil).toISOString() : null,
    blockedReason: snap.blockedReason ?? null,
    freesUpInMs: Object.fromEntries(FREES_UP_AMOUNTS.map((a, i) => [String(a), freesUp[i] ?? null])),
    spendableInMs: Object.fromEntries(
      FREES_UP_AMOUNTS.map((a, i) => {
        const ms = spendableIn[i];
        return [String(a), ms === null || ms === undefined ? null : Math.max(ms, blockLiftsIn)];
      }),
    ),
    unitsLeft,
    byTag: snap.byTag,
    byRegion,
    byMethod,
    bySite,
    recordedLate: {
      units: late.units,
      entries: late.entries,
      oldestAt: late.oldestAt !== undefined ? new Date(late.oldestAt).toISOString() : null,
    },
    pace,
    budgets,
    backfill: {
      scheduledNeed: line.scheduledNeed,
      scheduledRunsLeft: line.scheduledRunsLeft,
      ceiling: line.ceiling,
      pace: line.pace,
      spentToday: line.spentToday,
      allowedByNow: line.allowed,
      burstFrom: new Date(line.burstFrom).toISOString(),
    },
    ...(snap.blockedUntil !== undefined ? { blockedAt: snap.blockedUntil } : {}),
    storeNow: now,
  };
}

/**
 * For each of FREES_UP_AMOUNTS, in how many ms that many of the spent units free up (all of them
 * when fewer are spent), and in how many the scheduled tier can spend that many (0: now; null:
 * more than its ceiling), blocks aside.
 */
async function freesUpIn(
  ledger: Ledger,
  w: ReturnType<typeof bucketWindow>,
  bucket: BucketConfig,
  snap: Snapshot,
): Promise<[Array<number | null>, Array<number | null>]> {
  const ceiling = bucket.ceilings[DEFAULT_TIER];
  // How many of the spent units must age out before `a` more fit under the ceiling (0: they fit now).
  const short = FREES_UP_AMOUNTS.map((a) => (a > ceiling ? null : Math.max(0, snap.used + a - ceiling)));
  const resetsAt = w.resetsAt;
  if (resetsAt !== undefined) {
    // The day's log frees all at once at the upstream's midnight.
    const atReset = snap.used === 0 ? 0 : Math.max(0, resetsAt - snap.now);
    return [
      FREES_UP_AMOUNTS.map(() => atReset),
      short.map((n) => (n === null ? null : n === 0 ? 0 : atReset)),
    ];
  }
  // The ledger answers "until `amount` more than what is free now under `limit` is (used capped at
  // the limit)": `a` fit under the ceiling once the used units are down to ceiling − a.
  const asked = FREES_UP_AMOUNTS.filter((_, i) => (short[i] ?? 0) > 0).map(
    (a) => Math.min(snap.used, ceiling) + a - ceiling,
  );
  const times = await ledger.freesUpIn({
    key: w.key,
    windowMs: w.windowMs,
    limit: ceiling,
    amounts: [...FREES_UP_AMOUNTS, ...asked],
  });
  let k = FREES_UP_AMOUNTS.length;
  const spendable = short.map((n) => (n === null ? null : n === 0 ? 0 : (times[k++] ?? null)));
  return [times.slice(0, FREES_UP_AMOUNTS.length), spendable];
}

/** The window's spend by region, by method and by who spent, read from the entries' tags. */
function spendSplit(
  snap: Snapshot,
  credential: CredentialConfig,
): { byRegion: Record<string, number>; byMethod: Record<string, number>; bySite: Record<string, number> } {
  // Names are data: a token called `constructor` or `__proto__` is a site like any other.
  const byRegion: Record<string, number> = Object.create(null);
  const byMethod: Record<string, number> = Object.create(null);
  const bySite: Record<string, number> = Object.create(null);
  for (const [tag, units] of Object.entries(snap.byTag)) {
    const t = parseTag(tag, credential.methods);
    add(byRegion, t.region ?? '(none)', units);
    add(byMethod, t.method ?? '(other)', units);
    add(bySite, siteOf(tag) || '(none)', units);
  }
  return { byRegion, byMethod, bySite };
}

async function paceStatus(
  ledger: Ledger,
  credential: CredentialConfig,
  bucket: BucketConfig,
): Promise<BudgetStatus | null> {
  if (!bucket.pace) return null;
  const p = await ledger.peek({ key: paceKey(credential.id, bucket.id), windowMs: bucket.pace.windowMs });
  return {
    id: `${bucket.id} pace`,
    limit: bucket.pace.limit,
    windowMs: bucket.pace.windowMs,
    used: p.used,
    remaining: Math.max(0, bucket.pace.limit - p.used),
  };
}

/** The credential's budgets on this bucket, read one after the other. */
async function budgetStatuses(
  ledger: Ledger,
  credential: CredentialConfig,
  bucket: BucketConfig,
): Promise<BudgetStatus[]> {
  const budgets: BudgetStatus[] = [];
  for (const b of credential.budgets) {
    if (b.bucket !== bucket.id) continue;
    const s = await ledger.peek({ key: budgetKey(credential.id, b.id), windowMs: b.windowMs });
    budgets.push({
      id: b.id,
      limit: b.limit,
      windowMs: b.windowMs,
      used: s.used,
      remaining: Math.max(0, b.limit - s.used),
      tiers: b.tiers,
      ...(b.methods ? { methods: b.methods } : {}),
    });
  }
  return budgets;
}

/**
 * What each tier can still spend: the bucket's remaining units, lowered by the pace and by every
 * budget that covers all of the bucket's methods for that tier, with the one that limits it.
 */
function spendableByTier(
  credential: CredentialConfig,
  bucket: BucketConfig,
  remaining: Record<Tier, number>,
  pace: BudgetStatus | null,
  budgets: readonly BudgetStatus[],
): Pick<BucketStatus, 'spendable' | 'spendableLimitedBy'> {
  const bucketMethods = Object.entries(credential.methods)
    .filter(([, m]) => m.bucket === bucket.id)
    .map(([name]) => name);
  const spendable = { ...remaining };
  const spendableLimitedBy = Object.fromEntries(TIERS.map((t) => [t, null])) as Record<Tier, string | null>;
  const narrower = [
    ...(pace ? [{ b: pace, tiers: Object.keys(remaining) as Tier[], all: true }] : []),
    ...budgets.map((b) => ({
      b,
      tiers: b.tiers ?? (Object.keys(remaining) as Tier[]),
      all: !b.methods || bucketMethods.every((m) => b.methods!.includes(m)),
    })),
  ];
  for (const { b, tiers, all } of narrower) {
    if (!all) continue;
    for (const tier of tiers) {
      if (b.remaining < spendable[tier]) {
        spendable[tier] = b.remaining;
        spendableLimitedBy[tier] = b.id;
      }
    }
  }
  return { spendable, spendableLimitedBy };
}

export interface StatusOptions {
  /** Only this credential (ConfigError QG_UNKNOWN_CREDENTIAL when it is not configured). */
  credential?: string;
  /** The schedules' clock for the backfill figures (default: the upstream's calendar days). */
  pacer?: BackfillPacer;
  /** What the schedules will spend today, when no `pacer` is given (default: nothing scheduled). */
  scheduledNeed?: ScheduledNeed;
  /** The clock for upstream-day keys (default `Date.now`). */
  now?: () => number;
}

/** Read the ledger and report every configured credential's buckets. */
export async function quotaStatus(
  config: Config,
  ledger: Ledger,
  options: StatusOptions = {},
): Promise<StatusReport> {
  const now = (options.now ?? Date.now)();
  const pacer = options.pacer ?? new BackfillPacer(config, undefined, options.scheduledNeed);
  const creds =
    options.credential !== undefined ? [config.credential(options.credential)] : config.credentials;
  let storeNow: number | undefined;
  const credentials: CredentialStatus[] = [];
  for (const c of creds) {
    const buckets: BucketStatus[] = [];
    let latestBlock: number | undefined;
    for (const b of Object.values(c.buckets)) {
      const {
        blockedAt,
        storeNow: at,
        ...s
      } = await bucketStatus(ledger, c, b, now, pacer).catch((e: unknown) => {
        throw explainLedgerError(e, config, c, now);
      });
      storeNow ??= at;
      if (blockedAt !== undefined && (latestBlock === undefined || blockedAt > latestBlock))
        latestBlock = blockedAt;
      buckets.push(s);
    }
    credentials.push({
      id: c.id,
      profile: c.profile,
      timeZone: c.timeZone,
      blockedUntil: latestBlock !== undefined ? new Date(latestBlock).toISOString() : null,
      buckets,
    });
  }
  return { at: new Date(storeNow ?? now).toISOString(), store: ledger.kind, credentials };
}
