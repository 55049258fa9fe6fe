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
import { bucketOf } from '../config/lookups.js';
import { tierSpec } from '../config/tiers.js';
import type { Config, CredentialConfig } from '../config/types.js';
import { isQuotaGuardError } from '../errors.js';
import type { Decision, Ledger } from '../ledger/types.js';
import { defaultLogger } from '../logger.js';
import { UpstreamError } from '../outcome/errors.js';
import { DEFAULT_RETRY_POLICY, upstreamWaitMs, withRetries } from '../outcome/retry.js';
import { fromDecision, paceBackfill } from './decide.js';
import { entryKey, entryRequest, parseEntryRequest } from './entries.js';
import { explainLedgerError } from './explain.js';
import type { JournalFile } from './journal.js';
import { bucketWindow, type SpendBudget, spendBudgets } from './keys.js';
import { Late, type ReplayResult } from './late.js';
import { BackfillPacer, type DayOf, type PacingLine, type ScheduledNeed } from './pacing.js';
import {
  blockExhausted,
  type CallOutcome,
  type ReportDeps,
  type ReportResult,
  reportOutcome,
} from './report.js';
import { resolveSpend } from './resolve.js';
import { type SettleResult, Settler, type Unsettled } from './settle.js';
import { iso, stopMessage, stopOf } from './stops.js';
import { type StoreDownDeps, storeDownOutcome } from './store-down.js';
import type {
  Acquired,
  AcquireOptions,
  Attempt,
  CallOptions,
  CallResult,
  GuardEvent,
  GuardLogger,
  GuardStats,
  LateRecord,
  SpendArgs,
  SpendOutcome,
  Stop,
  StopReason,
} from './types.js';
import { whoAmI } from './who.js';

export { stopMessage } from './stops.js';

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
  /**
   * What the schedules will spend today, held back from the backfill (default: nothing scheduled).
   * The YouTube application passes `scheduledNeed(config)`, its trending runs.
   */
  scheduledNeed?: ScheduledNeed;
  /** Where fail-open spends and lost answers are written down (src/guard/journal.ts); absent: none. */
  journal?: JournalFile;
}

/** Carries a Stop out of `withRetries` (it is not a QuotaGuardError, so it is never retried). */
class Stopped extends Error {
  /** `logged`: `acquire` has logged and emitted it already (each stop is said once). */
  constructor(
    readonly stop: Stop,
    readonly logged = false,
  ) {
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
    journalled: 0,
    unjournalled: 0,
    recordedLate: 0,
    recordedLateUnits: 0,
    droppedLate: 0,
  };
  /** Per ledger key, the end of the block this guard last logged (one line per block). */
  readonly #blocksLogged = new Map<string, number>();
  readonly #settler: Settler<SpendOutcome>;
  readonly #reporting: ReportDeps;
  readonly #storeDown: StoreDownDeps;
  readonly #late: Late;

  constructor(opts: GuardOptions) {
    this.config = opts.config;
    this.ledger = opts.ledger;
    this.#logger = opts.logger ?? defaultLogger();
    this.#onEvent = opts.onEvent;
    this.#now = opts.now ?? Date.now;
    this.#nextReset = opts.nextReset ?? nextMidnight;
    this.#settler = new Settler(this.ledger, this.#now, this.#settled);
    this.pacer = new BackfillPacer(opts.config, opts.upstreamDay, opts.scheduledNeed);
    this.#reporting = {
      config: this.config,
      logger: this.#logger,
      now: () => this.#now(),
      nextReset: (timeZone, nowMs) => this.#nextReset(timeZone, nowMs),
      block: (credential, bucket, reason, until) => this.block(credential, bucket, reason, until),
      refund: (spent) => this.refund(spent),
      stopOf: (reason, o, error, retryAfterMs) => this.#stopOf(reason, o, error, retryAfterMs),
      stop: (stop) => this.#stop(stop),
    };
    this.#late = new Late({
      config: this.config,
      ledger: this.ledger,
      logger: this.#logger,
      stats: this.#stats,
      now: () => this.#now(),
      emit: (e) => this.#emit(e),
      ...(opts.journal ? { journal: opts.journal } : {}),
    });
    this.#storeDown = {
      config: this.config,
      ledger: this.ledger,
      logger: this.#logger,
      stats: this.#stats,
      settler: this.#settler,
      emit: (e) => this.#emit(e),
    };
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

  /** The journal this guard writes to, if any. */
  get journal(): JournalFile | undefined {
    return this.#late.journal;
  }

  /** Write a spend made at `at` into the ledger under entry `id` (`Ledger.record`), counted as late. */
  recordLate(
    args: Pick<SpendArgs, 'credential' | 'bucket' | 'method' | 'tier' | 'cost' | 'tag'>,
    id: string,
    at: number,
    source: LateRecord['source'] = 'client',
  ): Promise<LateRecord> {
    return this.#late.record(args, id, at, source);
  }

  /** Resolve this store's journal lines into the ledger (src/guard/late.ts); safe from many processes. */
  replayJournal(): Promise<ReplayResult> {
    return this.#late.replay();
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
    const now = this.#now();
    const { credential, bucket, tier, cost, tag, budgets, base } = resolveSpend(this.config, args, now);
    let line: PacingLine | undefined;
    let d: Decision;
    try {
      if (tierSpec(tier)?.paced) {
        line = await this.pacer.line(this.ledger, credential, bucket, now);
        const early = paceBackfill(budgets, line, cost, base, this.pacer);
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
        ...(args.entry !== undefined
          ? {
              entry: {
                key: entryKey(credential.id, args.entry),
                id: args.entry,
                request: entryRequest({ ...base, bucket: bucket.id }),
                ...(args.recallOnly ? { recallOnly: true } : {}),
              },
            }
          : {}),
      });
    } catch (e) {
      if (!isStoreDown(e)) throw explainLedgerError(e, this.config, credential, now);
      return this.#journalled(storeDownOutcome(this.#storeDown, base, args, e), args);
    }
    // The store answers: what the journal holds of it goes in now, behind this spend.
    if (this.#late.pending) void this.#late.replay().catch(() => undefined);
    const outcome = fromDecision(base, budgets, d, line, this.pacer);
    if (d.replayed) outcome.replayed = true;
    if (outcome.allowed) this.#stats.allowed++;
    else this.#stats.denied++;
    this.#emit({ type: 'spend', outcome });
    return outcome;
  }

  /** Journalled before the call site goes on: fail-open to record, a lost answer to resolve (not `caller`'s). */
  async #journalled(outcome: SpendOutcome, args: SpendArgs): Promise<SpendOutcome> {
    const open = outcome.reason === 'fail-open';
    if (args.failMode !== 'caller' && (outcome.unsettled || open))
      await this.#late.write(outcome.unsettled ? 'unknown' : 'record', outcome, open);
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
      if (!got.ok) throw new Stopped(got, true);
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
          throw new Stopped(await blockExhausted(this.#reporting, got.spend, { error: e }));
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
      if (e instanceof Stopped) return e.logged ? e.stop : this.#stop(e.stop);
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

  /** The spend an entry id was remembered with (`SpendArgs.entry`), or undefined. */
  async recallEntry(credentialId: string, id: string): Promise<SpendArgs | undefined> {
    const credential = this.config.credential(credentialId);
    const text = await this.ledger.recallEntry(entryKey(credential.id, id));
    const r = text === undefined ? undefined : parseEntryRequest(text);
    if (!r || r.credential !== credential.id) return undefined;
    return {
      credential: r.credential,
      bucket: r.bucket,
      ...(r.method !== undefined ? { method: r.method } : {}),
      tier: r.tier,
      cost: r.cost,
      tag: r.tag,
    };
  }

  /**
   * Take back an allowed spend (a no-op for fail-open and denied ones). A store outage is logged,
   * not thrown. Resolves true when units were taken back now or will be once the store answers;
   * false when there was nothing to take back (denied, refunded before, aged out) or it was lost.
   */
  async refund(outcome: SpendOutcome): Promise<boolean> {
    if (outcome.unsettled) this.#settler.refundInstead(outcome.unsettled.id);
    if (outcome.journal !== undefined && (await this.#late.cancel(outcome))) return true;
    const d = outcome.decision;
    if (!d?.allowed) return outcome.unsettled !== undefined;
    try {
      // Refunded before (a report sent twice) or pruned: nothing to count.
      if (!(await this.ledger.refund(d))) return false;
      this.#stats.refunds++;
      this.#emit({ type: 'refund', outcome });
      return true;
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
        return true;
      }
      this.#logger.warn(
        what,
        'ledger store unavailable: refund lost (the units stay spent until they age out)',
      );
      return false;
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
    // One line per block: the requests in flight when the quota ran out (eight regions at once)
    // each meet it and block again until the same moment; those are debug lines.
    const fields = { credential: credential.id, bucket: bucket.id, until: iso(until), reason };
    if ((this.#blocksLogged.get(key) ?? 0) >= until) this.#logger.debug?.(fields, 'bucket blocked again');
    else {
      this.#blocksLogged.set(key, until);
      this.#logger.warn(fields, 'bucket blocked');
    }
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
    this.#blocksLogged.delete(key);
    const fields = {
      credential: credential.id,
      bucket: bucket.id,
      by,
      ...whoAmI(),
      lifted: before.blockedUntil !== undefined,
      wasBlockedUntil: before.blockedUntil !== undefined ? iso(before.blockedUntil) : null,
      reason: before.blockedReason ?? null,
    };
    // Lifting a block is worth a warning (every host spends the bucket again); a bucket that was
    // not blocked is a line of its own, not a warning.
    if (before.blockedUntil !== undefined) this.#logger.warn(fields, 'bucket unblocked');
    else this.#logger.info(fields, 'nothing to unblock: the bucket was not blocked');
    return lifted;
  }

  /**
   * What became of a call spent through `spend` or `acquire`: `sent` keeps the charge, `never-sent`
   * refunds it, `exhausted` blocks the bucket the answer names (or the one spent) until `until`,
   * never past the upstream's next reset, and carries the `Stop` to honour (src/guard/report.ts).
   */
  report(spent: SpendOutcome, outcome: CallOutcome): Promise<ReportResult> {
    return reportOutcome(this.#reporting, spent, outcome);
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
    return stopOf(reason, o, this.#credentialOf(o), error, retryAfterMs);
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

export function createGuard(opts: GuardOptions): Guard {
  return new Guard(opts);
}
