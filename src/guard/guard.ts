/**
 * The guard: turns (credential, method, tier) into one atomic ledger spend, and decides what a job
 * does with the answer — go, sleep a little, or stop.
 *
 * - `spend`: one decision, a value. When the store is down the call site's fail mode applies.
 * - `acquire`: spend, sleeping through a Retry-After of at most `maxSleep`; otherwise a `Stop`.
 * - `call`: acquire, then the request; refunds only a request that provably never reached the
 *   upstream, and blocks the bucket until the upstream's next midnight when the upstream answers
 *   that a daily quota is used up (403 quotaExceeded, or a 429 naming a per-day limit) although the
 *   ledger allowed the call.
 */
import { setTimeout as sleepFor } from 'node:timers/promises';
import { nextMidnight } from '../calendar-day.js';
import { formatDuration } from '../config/duration.js';
import { bucketOf, methodOf } from '../config/lookups.js';
import { type Config, type CredentialConfig, type FailMode, TIERS } from '../config/types.js';
import { ExitCode, InvalidArgumentError, isQuotaGuardError, StoreUnavailableError } from '../errors.js';
import type { Decision, Ledger } from '../ledger/types.js';
import { defaultLogger } from '../logger.js';
import { UpstreamError } from '../outcome/errors.js';
import { DEFAULT_RETRY_POLICY, upstreamWaitMs, withRetries } from '../outcome/retry.js';
import { bucketOfUpstreamQuota, getProfile } from '../profiles/profiles.js';
import { explainLedgerError } from './explain.js';
import { bucketWindow, type SpendBudget, spendBudgets } from './keys.js';
import { BackfillPacer, backfillDayKey, type DayOf, type PacingLine } from './pacing.js';
import { type SettleResult, Settler, type Unsettled } from './settle.js';
import { siteOf } from './tags.js';
import type {
  Acquired,
  AcquireOptions,
  Attempt,
  CallOptions,
  CallResult,
  GuardEvent,
  GuardLogger,
  GuardStats,
  SpendArgs,
  SpendOutcome,
  Stop,
  StopReason,
} from './types.js';

export interface GuardOptions {
  config: Config;
  ledger: Ledger;
  /** Where fail-open spends, blocks and stops are logged (default: pino on stderr at $LOG_LEVEL, silent when unset). */
  logger?: GuardLogger;
  /** Every decision, sleep, stop, refund and block, for metrics. Must not throw. */
  onEvent?: (event: GuardEvent) => void;
  /** The guard's clock (default `Date.now`): upstream days and block ends are computed with it. */
  now?: () => number;
  /** When the upstream's quota next resets (default: next midnight in the credential's time zone). */
  nextReset?: (timeZone: string, nowMs: number) => number;
  /** The upstream's day around a moment, for the backfill's pacing (default: the calendar day in the time zone). */
  upstreamDay?: DayOf;
}

/** Carries a Stop out of `withRetries` (it is not a QuotaGuardError, so it is never retried). */
class Stopped extends Error {
  constructor(readonly stop: Stop) {
    super(stop.message);
  }
}

const DEFAULT_MAX_ATTEMPTS = 20;
const DEFAULT_CALL_ATTEMPTS = 3;

function isStoreDown(e: unknown): boolean {
  return isQuotaGuardError(e) && e.code === 'QG_STORE_UNAVAILABLE';
}

function isUpstreamError(e: unknown): e is UpstreamError {
  return (
    e instanceof UpstreamError ||
    (isQuotaGuardError(e) && typeof (e as { reached?: unknown }).reached === 'string')
  );
}

/**
 * An upstream failure that charged no project: never sent, or sent with a key the upstream could
 * not attribute to any project (keyInvalid). The guard refunds these spends.
 */
export function notCharged(e: unknown): boolean {
  return isUpstreamError(e) && !e.charged;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Sleep `ms`; false when the signal aborted it. */
async function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return false;
  try {
    await sleepFor(ms, undefined, signal ? { signal } : undefined);
    return true;
  } catch {
    return false;
  }
}

export class Guard {
  readonly config: Config;
  readonly ledger: Ledger;
  readonly #logger: GuardLogger;
  readonly #onEvent: ((e: GuardEvent) => void) | undefined;
  readonly #now: () => number;
  readonly #nextReset: (timeZone: string, nowMs: number) => number;
  /** The schedules, for the backfill's ceiling and pacing line. */
  readonly pacer: BackfillPacer;
  readonly #stats: GuardStats = {
    allowed: 0,
    denied: 0,
    failOpen: 0,
    failClosed: 0,
    refunds: 0,
    blocks: 0,
    stops: 0,
    unsettled: 0,
  };
  readonly #settler: Settler<SpendOutcome>;

  constructor(opts: GuardOptions) {
    this.config = opts.config;
    this.ledger = opts.ledger;
    this.#logger = opts.logger ?? defaultLogger();
    this.#onEvent = opts.onEvent;
    this.#now = opts.now ?? Date.now;
    this.#nextReset = opts.nextReset ?? nextMidnight;
    this.#settler = new Settler(this.ledger, this.#now, this.#settled);
    this.pacer = new BackfillPacer(opts.config, opts.upstreamDay);
  }

  /**
   * The backfill's pacing line on a credential's bucket at `nowMs` (default now): its ceiling (the
   * scheduled need held back), what it spent today and the units the line allows by now.
   */
  async pacingLine(credentialId: string, bucketId: string, nowMs = this.#now()): Promise<PacingLine> {
    const credential = this.config.credential(credentialId);
    return this.pacer.line(this.ledger, credential, bucketOf(credential, bucketId), nowMs);
  }

  /** Counters since the guard was created (fail-open spends among them). */
  stats(): GuardStats {
    return { ...this.#stats, unsettled: this.#settler.size };
  }

  /**
   * Wait (at most `maxWaitMs`) until every spend whose answer never came is settled; returns how
   * many are still pending. Settling goes on in the background anyway; a process that is about to
   * exit can give it this much time.
   */
  settlePending(maxWaitMs: number): Promise<number> {
    return this.#settler.flush(maxWaitMs);
  }

  readonly #settled = (item: Unsettled<SpendOutcome>, result: SettleResult, error?: unknown): void => {
    const o = item.about;
    const what = { credential: o.credential, bucket: o.bucket, cost: o.cost, tag: o.tag, result };
    const unrecorded =
      o.reason === 'fail-open' && !item.refund && (result === 'absent' || result === 'abandoned');
    if (unrecorded) this.#stats.failOpen++;
    if (result === 'refunded') this.#stats.refunds++;
    if (result === 'abandoned') {
      this.#logger.warn(
        { ...what, ...(error ? { error: (error as Error).message } : {}) },
        'ledger store did not answer in time to settle a spend that timed out; it counts as ' +
          (item.refund ? 'spent until it ages out' : 'not recorded'),
      );
    } else {
      this.#logger.info(what, `settled a spend that timed out: ${result}`);
    }
    this.#emit({ type: 'settled', outcome: o, result, unrecorded });
  };

  #emit(e: GuardEvent): void {
    this.#onEvent?.(e);
  }

  /** One decision: allowed, denied (budget / blocked), or the store-down policy's answer. */
  async spend(args: SpendArgs): Promise<SpendOutcome> {
    const credential = this.config.credential(args.credential);
    const tier = args.tier ?? 'scheduled';
    if (!TIERS.includes(tier)) {
      throw new InvalidArgumentError('tier', `must be one of ${TIERS.join(', ')}, got '${String(tier)}'`);
    }
    let bucketId: string;
    let cost: number;
    if (args.method !== undefined) {
      const spec = methodOf(credential, args.method);
      if (args.bucket !== undefined && args.bucket !== spec.bucket) {
        throw new InvalidArgumentError(
          'bucket',
          `'${args.method}' spends bucket '${spec.bucket}', not '${args.bucket}'`,
        );
      }
      bucketId = spec.bucket;
      cost = args.cost ?? spec.cost;
    } else {
      bucketId = args.bucket ?? credential.defaultBucket;
      cost = args.cost ?? 1;
    }
    const bucket = bucketOf(credential, bucketId);
    if (!Number.isInteger(cost) || cost < 1) {
      throw new InvalidArgumentError('cost', `must be an integer >= 1, got ${String(cost)}`);
    }
    const tag = args.tag ?? args.method ?? bucketId;
    const now = this.#now();
    const budgets = spendBudgets(credential, bucket, args.method, tier, now);
    let line: PacingLine | undefined;
    const base = {
      credential: credential.id,
      bucket: bucket.id,
      ...(args.method !== undefined ? { method: args.method } : {}),
      tier,
      cost,
      tag,
      ceiling: bucket.ceilings[tier],
      at: now,
    };
    let d: Decision;
    try {
      if (tier === 'backfill') {
        line = await this.pacer.line(this.ledger, credential, bucket, now);
        const early = this.#paceBackfill(budgets, line, cost, base);
        if (early) {
          this.#stats.denied++;
          this.#emit({ type: 'spend', outcome: early });
          return early;
        }
      }
      d = await this.ledger.spend({
        budgets: budgets.map(({ key, limit, windowMs }) => ({ key, limit, windowMs })),
        cost,
        tag,
      });
    } catch (e) {
      if (!isStoreDown(e)) throw explainLedgerError(e, this.config, credential, now);
      return this.#storeDown(base, args, e);
    }
    const outcome = this.#fromDecision(base, budgets, d, line);
    if (outcome.allowed) this.#stats.allowed++;
    else this.#stats.denied++;
    this.#emit({ type: 'spend', outcome });
    return outcome;
  }

  /**
   * A backfill spend: the bucket's limit becomes the backfill's ceiling less the scheduled need, and
   * the day's backfill log is spent with the pacing line as its limit. Returns a denial when either
   * is already short (the ledger refuses limits below the cost), else undefined.
   */
  #paceBackfill(
    budgets: SpendBudget[],
    line: PacingLine,
    cost: number,
    base: Omit<SpendOutcome, 'allowed' | 'reason' | 'retryAfterMs'>,
  ): SpendOutcome | undefined {
    const bucket = budgets[0]!;
    const dayLimit = line.allowed ?? Number.MAX_SAFE_INTEGER;
    const denied = (limitedBy: string, remaining: number, retryAfterMs: number): SpendOutcome => ({
      ...base,
      ceiling: line.ceiling,
      allowed: false,
      reason: 'budget',
      retryAfterMs: Math.max(1, Math.ceil(retryAfterMs)),
      remaining: Math.max(0, remaining),
      limitedBy,
    });
    // A blocked bucket: the ledger says so.
    if (line.blockedUntil !== undefined) return undefined;
    if (line.ceiling < cost) {
      // Held back for the scheduled runs: it frees as they start.
      return denied(bucket.name, line.ceiling - line.used, this.#untilNeedDrops(line));
    }
    // A full bucket is the bucket's denial (the ledger says when it frees), not the line's.
    const full = line.used + cost > line.ceiling;
    if (!full && line.spentToday + cost > dayLimit)
      return denied(`${bucket.name} backfill pace`, dayLimit - line.spentToday, paceWait(line, cost));
    bucket.limit = line.ceiling;
    budgets.push({
      key: backfillDayKey(line.credential, line.bucket, line.dayStart),
      limit: Math.max(cost, dayLimit),
      windowMs: line.dayEnd - line.dayStart,
      role: 'backfill-day',
      name: `${bucket.name} backfill pace`,
    });
    return undefined;
  }

  /** ms until the next scheduled run on the line's bucket no longer counts as need. */
  #untilNeedDrops(line: PacingLine): number {
    const credential = this.config.credential(line.credential);
    const day = this.pacer.day(credential, line.at);
    const runs = day.trending.get(line.bucket) ?? [];
    const grace = this.config.maxSleepMs;
    const next = runs.find((r) => r.at + grace > line.at);
    return next ? next.at + grace - line.at + 1 : Math.max(1, line.dayEnd - line.at);
  }

  #fromDecision(
    base: Omit<SpendOutcome, 'allowed' | 'reason' | 'retryAfterMs'>,
    budgets: SpendBudget[],
    d: Decision,
    line?: PacingLine,
  ): SpendOutcome {
    if (d.allowed)
      return {
        ...base,
        allowed: true,
        reason: 'allowed',
        retryAfterMs: 0,
        remaining: d.remaining,
        decision: d,
        at: d.at,
      };
    const limiter = budgets.find((p) => p.key === d.limitedBy);
    let retryAfterMs = d.retryAfterMs;
    // A log keyed by the upstream day empties at the upstream's midnight, not when its entries age out.
    if (d.blockedUntil === undefined && limiter?.resetsAt !== undefined) {
      retryAfterMs = Math.min(retryAfterMs, Math.max(1, limiter.resetsAt - d.at));
    }
    // The pacing line rises with time; its entries do not age out within the day. The scheduled
    // need held back from the backfill shrinks as the runs start.
    if (d.blockedUntil === undefined && line) {
      if (limiter?.role === 'backfill-day') retryAfterMs = Math.max(1, Math.ceil(paceWait(line, base.cost)));
      else if (limiter?.role === 'bucket') retryAfterMs = Math.min(retryAfterMs, this.#untilNeedDrops(line));
    }
    return {
      ...base,
      allowed: false,
      reason: d.blockedUntil !== undefined ? 'blocked' : 'budget',
      retryAfterMs,
      remaining: d.remaining,
      ...(limiter ? { limitedBy: limiter.name } : {}),
      limitedByKey: d.limitedBy,
      ...(d.blockedUntil !== undefined ? { blockedUntil: d.blockedUntil } : {}),
      decision: d,
      at: d.at,
    };
  }

  #failMode(args: SpendArgs, cost: number, tag: string): FailMode {
    const site = args.site ?? siteOf(tag);
    const policy = args.failMode ?? this.config.storeDown.sites[site] ?? this.config.storeDown.default;
    if (policy === 'auto') return cost <= this.config.storeDown.openMaxCost ? 'open' : 'closed';
    return policy;
  }

  #storeDown(
    base: Omit<SpendOutcome, 'allowed' | 'reason' | 'retryAfterMs'>,
    args: SpendArgs,
    error: unknown,
  ): SpendOutcome {
    const failMode = this.#failMode(args, base.cost, base.tag);
    const detail = {
      credential: base.credential,
      bucket: base.bucket,
      method: base.method,
      tier: base.tier,
      cost: base.cost,
      tag: base.tag,
      failMode,
      error: (error as Error).message,
    };
    const open = failMode === 'open';
    // Sent but not answered: the store may still apply it, so it is settled once the store answers.
    const unsettled =
      error instanceof StoreUnavailableError && this.ledger.settle ? error.unsettled : undefined;
    const outcome: SpendOutcome = {
      ...base,
      allowed: open,
      reason: open ? 'fail-open' : 'store-down',
      retryAfterMs: 0,
      failMode,
      ...(unsettled ? { unsettled } : {}),
    };
    if (open) {
      if (!unsettled) this.#stats.failOpen++;
      this.#logger.warn(
        { ...detail, failOpenTotal: this.#stats.failOpen, ...(unsettled ? { unsettled: true } : {}) },
        unsettled
          ? 'ledger store did not answer: spend allowed; whether it was recorded is settled when the store answers (fail-open)'
          : 'ledger store unavailable: spend allowed without recording it (fail-open)',
      );
    } else {
      this.#stats.failClosed++;
      this.#logger.warn(
        detail,
        unsettled
          ? 'ledger store did not answer: spend refused; taken back if the store recorded it (fail-closed)'
          : 'ledger store unavailable: spend refused (fail-closed)',
      );
    }
    // A refused spend never reaches the upstream: if the store applied it after all, take it back.
    if (unsettled) this.#settler.add(unsettled, !open, outcome);
    if (open) this.#emit({ type: 'fail-open', outcome, error, unsettled: unsettled !== undefined });
    else this.#emit({ type: 'fail-closed', outcome, error });
    return outcome;
  }

  /**
   * Spend, sleeping and retrying while the Retry-After is at most `maxSleepMs` (the config's
   * maxSleep by default); otherwise stop: a `Stop` value says what was left, why, and when to resume.
   */
  async acquire(args: SpendArgs, opts: AcquireOptions = {}): Promise<Acquired | Stop> {
    const maxSleep = opts.maxSleepMs ?? this.config.maxSleepMs;
    const maxAttempts = opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    let waited = 0;
    for (let n = 1; ; n++) {
      const outcome = await this.spend(args);
      if (outcome.allowed) return { ok: true, spend: outcome, waitedMs: waited };
      const canWait =
        (outcome.reason === 'budget' || outcome.reason === 'blocked') &&
        outcome.retryAfterMs <= maxSleep &&
        n < maxAttempts;
      if (!canWait) return this.#stop(await this.#stopFrom(outcome));
      // A little jitter so that jobs denied together do not all retry in the same millisecond,
      // never past maxSleep (retryAfterMs is at most maxSleep here, so the wait still covers it).
      const ms = Math.min(
        maxSleep,
        outcome.retryAfterMs + Math.floor(Math.random() * Math.min(50, outcome.retryAfterMs / 10 + 1)),
      );
      this.#emit({ type: 'sleep', ms, outcome });
      if (!(await sleep(ms, opts.signal))) return this.#stop(this.#stopOf('aborted', outcome));
      waited += ms;
    }
  }

  /**
   * Spend through `acquire`, then run `fn` (one upstream request); retried with `withRetries`
   * (src/outcome/retry.ts) for 5xx, transport failures and short rate limits, each attempt spending
   * again. The upstream charges every request it receives to the key's project, so only an error
   * with `reached === 'never'`, or a key it rejected as invalid (no project to charge), is refunded. A quotaExceeded answer after an allowed spend blocks the
   * credential's bucket until the upstream's next reset and stops; so does a rate limit that cannot
   * be waited out. Other upstream errors and bugs are thrown.
   */
  async call<T>(
    args: SpendArgs,
    fn: (attempt: Attempt) => Promise<T>,
    opts: CallOptions = {},
  ): Promise<CallResult<T>> {
    const maxSleep = opts.maxSleepMs ?? this.config.maxSleepMs;
    let last: SpendOutcome | undefined;
    const once = async (n: number): Promise<{ value: T; spend: SpendOutcome; n: number }> => {
      const got = await this.acquire(args, opts);
      if (!got.ok) throw new Stopped(got);
      last = got.spend;
      try {
        return {
          value: await fn({ n, spend: got.spend, ...(opts.signal ? { signal: opts.signal } : {}) }),
          spend: got.spend,
          n,
        };
      } catch (e) {
        // Anything but an upstream answer (a bug, an abort) carries no proof it was not charged.
        if (!isUpstreamError(e)) throw e;
        this.#emit({ type: 'upstream-error', error: e, outcome: got.spend });
        if (notCharged(e)) await this.refund(got.spend);
        if (e.code === 'QG_UPSTREAM_QUOTA_EXCEEDED')
          throw new Stopped(await this.#blockOnQuotaExceeded(got.spend, e));
        throw e;
      }
    };
    try {
      const r = await withRetries(once, {
        maxAttempts: opts.attempts ?? DEFAULT_CALL_ATTEMPTS,
        maxRetryAfterMs: maxSleep,
        maxTotalMs: Math.max(maxSleep, DEFAULT_RETRY_POLICY.maxTotalMs),
        now: this.#now,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      return { ok: true, value: r.value, attempts: r.n, spend: r.spend };
    } catch (e) {
      if (e instanceof Stopped) return this.#stop(e.stop);
      if (last && isUpstreamError(e) && e.code === 'QG_UPSTREAM_RATE_LIMITED') {
        const wait = upstreamWaitMs(e, this.#now()) ?? 0;
        return this.#stop(this.#stopOf('rate-limited', { ...last, at: this.#now() }, e, wait));
      }
      // A 5xx that asked for a longer wait than this call site sleeps: stop until then.
      const asked = isUpstreamError(e) && e.code === 'QG_UPSTREAM_SERVER_ERROR' ? e.retryAfterMs : undefined;
      if (last && asked !== undefined && asked > 0) {
        return this.#stop(
          this.#stopOf('upstream-busy', { ...last, at: this.#now() }, e as UpstreamError, asked),
        );
      }
      throw e;
    }
  }

  /** Take back an allowed spend (a no-op for fail-open and denied ones). A store outage is logged, not thrown. */
  async refund(outcome: SpendOutcome): Promise<void> {
    if (outcome.unsettled) this.#settler.refundInstead(outcome.unsettled.id);
    const d = outcome.decision;
    if (!d?.allowed) return;
    try {
      await this.ledger.refund(d);
      this.#stats.refunds++;
      this.#emit({ type: 'refund', outcome });
    } catch (e) {
      if (!isStoreDown(e)) throw e;
      const what = {
        credential: outcome.credential,
        bucket: outcome.bucket,
        cost: outcome.cost,
        tag: outcome.tag,
      };
      if (this.ledger.settle && this.ledger.kind !== 'sqlite') {
        // Retried once the store answers, like a spend whose answer never came.
        this.#settler.add(
          { id: d.id, keys: d.keys, cost: d.cost, windowMs: this.#longestWindowOf(outcome) },
          true,
          outcome,
        );
        this.#logger.warn(what, 'ledger store unavailable: refund retried when the store answers');
        return;
      }
      this.#logger.warn(
        what,
        'ledger store unavailable: refund lost (the units stay spent until they age out)',
      );
    }
  }

  /**
   * Block a credential's bucket until `untilEpochMs` (default: the upstream's next reset), so every
   * job on every host stops spending it. Other buckets of the credential go on.
   */
  async block(
    credentialId: string,
    bucketId: string,
    reason: string,
    untilEpochMs?: number,
  ): Promise<{ key: string; until: number }> {
    const credential = this.config.credential(credentialId);
    const bucket = bucketOf(credential, bucketId);
    const now = this.#now();
    const until = untilEpochMs ?? this.#nextReset(credential.timeZone, now);
    const { key } = bucketWindow(credential, bucket, now);
    await this.ledger.block(key, until, reason);
    this.#stats.blocks++;
    this.#emit({ type: 'block', credential: credential.id, bucket: bucket.id, key, until, reason });
    this.#logger.warn(
      { credential: credential.id, bucket: bucket.id, until: iso(until), reason },
      'bucket blocked',
    );
    return { key, until };
  }

  /**
   * Lift a block early (an operator knows the upstream reset the quota). Logged, with the block it
   * lifted; resolves with that block (`blockedUntil` undefined when the bucket was not blocked).
   */
  async unblock(
    credentialId: string,
    bucketId: string,
    by = 'manual',
  ): Promise<{ key: string; blockedUntil?: number; reason?: string }> {
    const credential = this.config.credential(credentialId);
    const bucket = bucketOf(credential, bucketId);
    const { key, windowMs } = bucketWindow(credential, bucket, this.#now());
    const before = await this.ledger.peek({ key, windowMs });
    await this.ledger.unblock(key);
    const lifted = {
      key,
      ...(before.blockedUntil !== undefined ? { blockedUntil: before.blockedUntil } : {}),
      ...(before.blockedReason !== undefined ? { reason: before.blockedReason } : {}),
    };
    this.#logger.warn(
      {
        credential: credential.id,
        bucket: bucket.id,
        by,
        wasBlockedUntil: before.blockedUntil !== undefined ? iso(before.blockedUntil) : null,
        reason: before.blockedReason ?? null,
      },
      before.blockedUntil !== undefined ? 'bucket unblocked' : 'bucket unblocked (it was not blocked)',
    );
    return lifted;
  }

  /**
   * The upstream says a bucket is used up for the day although the ledger allowed the call: block
   * the bucket the answer names (the profile's table of upstream quota names), or, when it names
   * none the profile knows, the bucket the call spent, until the upstream's next reset.
   */
  async #blockOnQuotaExceeded(spent: SpendOutcome, error: UpstreamError): Promise<Stop> {
    const credential = this.config.credential(spent.credential);
    const now = this.#now();
    const until = this.#nextReset(credential.timeZone, now);
    const profile = getProfile(credential.profile, this.config.profiles);
    const named = error.quota && profile ? bucketOfUpstreamQuota(profile, error.quota) : undefined;
    const bucket = named !== undefined && credential.buckets[named] !== undefined ? named : spent.bucket;
    const what = error.reason ?? 'quotaExceeded';
    const limit = error.quota?.limit ?? error.quota?.metric;
    const reason = `upstream answered ${what}${limit ? ` (${limit})` : ''} to ${spent.method ?? spent.bucket} at ${iso(now)} although the ledger allowed it`;
    try {
      await this.block(credential.id, bucket, reason, until);
    } catch (e) {
      if (!isStoreDown(e)) throw e;
      this.#logger.warn(
        { credential: credential.id, bucket },
        'ledger store unavailable: could not record the upstream quota block',
      );
    }
    const stop = this.#stopOf('upstream-quota', { ...spent, bucket, at: now }, error, until - now);
    stop.blockedUntil = until;
    stop.blockedReason = reason;
    return stop;
  }

  async #stopFrom(outcome: SpendOutcome): Promise<Stop> {
    const reason: StopReason =
      outcome.reason === 'blocked' ? 'blocked' : outcome.reason === 'store-down' ? 'store-down' : 'budget';
    const stop = this.#stopOf(reason, outcome);
    if (reason === 'blocked' && outcome.limitedByKey !== undefined) {
      if (outcome.blockedUntil !== undefined) stop.blockedUntil = outcome.blockedUntil;
      try {
        const snap = await this.ledger.peek({ key: outcome.limitedByKey, windowMs: this.#windowOf(outcome) });
        if (snap.blockedReason) stop.blockedReason = snap.blockedReason;
      } catch {
        // The reason is a nicety; the stop stands without it.
      }
      stop.message = stopMessage(stop, this.#credentialOf(outcome));
    }
    return stop;
  }

  #credentialOf(o: { credential: string }): CredentialConfig {
    return this.config.credential(o.credential);
  }

  #budgetsOf(outcome: SpendOutcome): SpendBudget[] {
    const credential = this.#credentialOf(outcome);
    return spendBudgets(
      credential,
      bucketOf(credential, outcome.bucket),
      outcome.method,
      outcome.tier,
      outcome.at,
    );
  }

  #windowOf(outcome: SpendOutcome): number {
    return this.#budgetsOf(outcome).find((p) => p.key === outcome.limitedByKey)?.windowMs ?? 1;
  }

  #longestWindowOf(outcome: SpendOutcome): number {
    return Math.max(1, ...this.#budgetsOf(outcome).map((p) => p.windowMs));
  }

  #stopOf(reason: StopReason, o: SpendOutcome, error?: UpstreamError, retryAfterMs = o.retryAfterMs): Stop {
    const stop: Stop = {
      ok: false,
      reason,
      credential: o.credential,
      bucket: o.bucket,
      ...(o.method !== undefined ? { method: o.method } : {}),
      tier: o.tier,
      cost: o.cost,
      ...(o.remaining !== undefined && reason !== 'upstream-quota' ? { remaining: o.remaining } : {}),
      retryAfterMs,
      resumeAt: o.at + retryAfterMs,
      ...(o.limitedBy !== undefined ? { limitedBy: o.limitedBy } : {}),
      ...(o.blockedUntil !== undefined ? { blockedUntil: o.blockedUntil } : {}),
      ...(error ? { error } : {}),
      exitCode: reason === 'store-down' ? ExitCode.UNAVAILABLE : ExitCode.TEMPFAIL,
      message: '',
    };
    stop.message = stopMessage(stop, this.#credentialOf(o));
    return stop;
  }

  #stop(stop: Stop): Stop {
    this.#stats.stops++;
    this.#logger.warn(
      {
        credential: stop.credential,
        bucket: stop.bucket,
        method: stop.method,
        tier: stop.tier,
        reason: stop.reason,
        remaining: stop.remaining,
        retryAfterMs: stop.retryAfterMs,
        resumeAt: iso(stop.resumeAt),
      },
      stop.message,
    );
    this.#emit({ type: 'stop', stop });
    return stop;
  }
}

/** ms until the pacing line allows `cost` more units (or until it is lifted at day's end). */
function paceWait(line: PacingLine, cost: number): number {
  const toBurst = Math.max(1, line.burstFrom - line.at);
  const rate = (line.allowance * (1 - line.holdBack)) / Math.max(1, line.burstFrom - line.dayStart);
  const short = line.spentToday + cost - (line.allowed ?? 0);
  if (rate <= 0 || short <= 0) return toBurst;
  return Math.min(toBurst, short / rate);
}

/** The one line a stop is logged with: what was left, why, and when the job can resume. */
export function stopMessage(stop: Stop, credential: CredentialConfig): string {
  const where = `${stop.credential}/${stop.bucket}`;
  const what = `${stop.method ?? 'spend'} (${stop.cost} unit${stop.cost === 1 ? '' : 's'}, ${stop.tier})`;
  const resume = `resume in ${formatDuration(stop.retryAfterMs)} (${iso(stop.resumeAt)})`;
  const bucket = credential.buckets[stop.bucket];
  switch (stop.reason) {
    case 'budget': {
      const left =
        stop.remaining === undefined ? '' : `${stop.remaining} unit${stop.remaining === 1 ? '' : 's'} left`;
      const under =
        stop.limitedBy && stop.limitedBy !== stop.bucket
          ? `${stop.limitedBy} of ${where}`
          : `${where} below the ${stop.tier} ceiling (${bucket?.ceilings[stop.tier] ?? '?'} of ${bucket?.quota ?? '?'})`;
      return `stopped: ${what} does not fit: ${left} under ${under}; ${resume}`;
    }
    case 'blocked':
      return `stopped: ${where} is blocked until ${iso(stop.blockedUntil ?? stop.resumeAt)}${stop.blockedReason ? ` (${stop.blockedReason})` : ''}; ${resume}`;
    case 'store-down':
      return `stopped: the ledger store is unavailable and ${what} is fail-closed; retry when the store is back`;
    case 'upstream-quota':
      return `stopped: the upstream answered ${stop.error?.reason ?? 'quotaExceeded'} (quota used up for the day) for ${where} although the ledger allowed it; bucket blocked until ${iso(stop.resumeAt)}, other buckets go on; ${resume}`;
    case 'rate-limited':
      return `stopped: the upstream rate-limited ${what} on ${where}${stop.error?.quota?.interval === 'minute' ? ' (a per-minute limit)' : ''}; ${resume}`;
    case 'upstream-busy':
      return `stopped: the upstream failed ${what} on ${where} (HTTP ${stop.error?.status ?? '5xx'}) and asked for a wait longer than this call site sleeps; ${resume}`;
    case 'aborted':
      return `stopped: aborted while waiting for ${where}`;
  }
}

export function createGuard(opts: GuardOptions): Guard {
  return new Guard(opts);
}
