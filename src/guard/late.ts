/**
 * What arrives late: spends written into the ledger after the fact, and the guard's journal of the
 * spends it could not tell the ledger about (src/guard/journal.ts).
 *
 * - `record`: one spend that already happened, at its own time, under its entry id
 *   (`Ledger.record`: never denied, counted once per id) — the journal's lines and the decision
 *   API's `POST /v1/record` both come through here, so both are counted alike.
 * - `journal`: write a fail-open spend (`record`) or a lost answer (`unknown`) down before the call
 *   site goes on.
 * - `replay`: resolve the journal's lines of this store: a `record` line is recorded; an `unknown`
 *   one is kept (and recorded if it never landed) when the call site used it, taken out or voided
 *   when it did not. One pass at a time; a store that fails again ends the pass, the rest stays.
 */
import { randomUUID } from 'node:crypto';
import { redactStoreUrl } from '../config/store-url.js';
import type { Config } from '../config/types.js';
import { isQuotaGuardError } from '../errors.js';
import type { Ledger } from '../ledger/types.js';
import { entryKey, entryRequest } from './entries.js';
import type { JournalBody, JournalEntry, JournalFile, JournalOp } from './journal.js';
import { resolveSpend } from './resolve.js';
import type { GuardEvent, GuardLogger, GuardStats, LateRecord, SpendArgs, SpendOutcome } from './types.js';

export interface LateDeps {
  config: Config;
  ledger: Ledger;
  logger: GuardLogger;
  stats: GuardStats;
  now(): number;
  emit(e: GuardEvent): void;
  /** Absent: nothing is journalled (fail-open spends stay unrecorded, as they are logged). */
  journal?: JournalFile;
}

/** What one replay pass did. */
export interface ReplayResult {
  /** Lines of this store resolved (recorded, found recorded, dropped, taken out). */
  resolved: number;
  recorded: number;
  dropped: number;
  /** Lines of this store still in the journal (the store failed again). */
  left: number;
  /** Lines that could not be resolved at all (a credential no longer configured): dropped, logged. */
  failed: number;
}

/** The store a journal line belongs to: its redacted URL and key prefix. */
export function storeIdentity(config: Config): string {
  const prefix = config.store.keyPrefix;
  return `${redactStoreUrl(config.store.url)}${prefix ? ` prefix=${prefix}` : ''}`;
}

/** A fresh entry id for a spend that had none (within `SpendEntry.id`'s 64 characters). */
export function journalEntryId(): string {
  return `qgj-${randomUUID().replaceAll('-', '')}`;
}

function isStoreDown(e: unknown): boolean {
  return isQuotaGuardError(e) && e.code === 'QG_STORE_UNAVAILABLE';
}

export class Late {
  readonly #d: LateDeps;
  readonly #store: string;
  /** Whether this store's lines may be in the journal (set by an append, or a file at start). */
  #pending: boolean;
  /** Appends so far: a pass that ends does not clear `pending` for lines appended while it ran. */
  #appended = 0;
  #replaying: Promise<ReplayResult> | undefined;
  /** The journal refused an append: said once until an append succeeds again. */
  #refusedSaid = false;

  constructor(deps: LateDeps) {
    this.#d = deps;
    this.#store = storeIdentity(deps.config);
    this.#pending = deps.journal !== undefined && deps.journal.size() > 0;
  }

  #error(obj: object, msg: string): void {
    const l = this.#d.logger;
    if (l.error) l.error(obj, msg);
    else l.warn(obj, msg);
  }

  get journal(): JournalFile | undefined {
    return this.#d.journal;
  }

  get pending(): boolean {
    return this.#pending;
  }

  /**
   * Write a spend that already happened into the ledger at `at`, under entry `id` (see
   * `Ledger.record`); counted and emitted as recorded late.
   */
  async record(
    args: Pick<SpendArgs, 'credential' | 'bucket' | 'method' | 'tier' | 'cost' | 'tag'>,
    id: string,
    at: number,
    source: LateRecord['source'],
  ): Promise<LateRecord> {
    // The budgets as they were when it was spent (an upstream day's log is the day it was spent in).
    const { credential, bucket, cost, tag, budgets, base } = resolveSpend(
      this.#d.config,
      { ...args, entry: id },
      Math.min(at, this.#d.now()),
    );
    const r = await this.#d.ledger.record({
      budgets: budgets.map(({ key, windowMs }) => ({ key, windowMs })),
      cost,
      tag,
      at,
      entry: {
        key: entryKey(credential.id, id),
        id,
        request: entryRequest({ ...base, bucket: bucket.id }),
      },
    });
    const late: LateRecord = {
      credential: credential.id,
      bucket: bucket.id,
      cost,
      tag,
      at: r.at,
      outcome: r.outcome,
      source,
    };
    const s = this.#d.stats;
    if (r.outcome === 'recorded') {
      s.recordedLate++;
      s.recordedLateUnits += cost;
    } else if (r.outcome === 'dropped') s.droppedLate++;
    this.#d.emit({ type: 'recorded-late', late });
    return late;
  }

  /**
   * Write a spend down before the call site goes on: true when the journal holds it (its id is then
   * `outcome.journal`). A journal that refuses it (full, locked, unwritable) is said in one line.
   */
  async write(op: JournalOp, outcome: SpendOutcome, used: boolean): Promise<boolean> {
    const journal = this.#d.journal;
    if (!journal) return false;
    const id = outcome.entry ?? journalEntryId();
    const body: JournalBody = {
      credential: outcome.credential,
      bucket: outcome.bucket,
      ...(outcome.method !== undefined ? { method: outcome.method } : {}),
      tier: outcome.tier,
      cost: outcome.cost,
      tag: outcome.tag,
      at: outcome.at,
      ...(op === 'unknown' ? { used } : {}),
      // Sent without an entry id: what it would have stored is asked for by its log id.
      ...(op === 'unknown' && outcome.entry === undefined && outcome.unsettled
        ? { spend: outcome.unsettled }
        : {}),
    };
    const entry: JournalEntry = { id, op, written: Date.now(), store: this.#store, body };
    const r = await journal.append([entry]);
    if (!r.ok) {
      this.#d.stats.unjournalled++;
      const fields = { credential: outcome.credential, bucket: outcome.bucket, cost: outcome.cost };
      if (!this.#refusedSaid) {
        this.#refusedSaid = true;
        this.#error(
          { ...fields, journal: journal.path, reason: r.reason },
          `${r.message}: spends allowed while the store is down are no longer journalled and stay unrecorded`,
        );
      } else this.#d.logger.debug?.({ ...fields, reason: r.reason }, 'spend not journalled');
      return false;
    }
    this.#refusedSaid = false;
    this.#pending = true;
    this.#appended++;
    outcome.journal = id;
    this.#d.stats.journalled++;
    this.#d.emit({ type: 'journalled', outcome, op, id });
    return true;
  }

  /**
   * A journalled spend its caller takes back (the request provably never reached the upstream):
   * its line goes, or — replayed already — its recorded entry is voided. True when it will not count.
   */
  async cancel(outcome: SpendOutcome): Promise<boolean> {
    const journal = this.#d.journal;
    const id = outcome.journal;
    if (!journal || id === undefined) return false;
    // A pass under way may be recording it now: after it, the line is there or the entry is.
    await this.#replaying?.catch(() => undefined);
    if ((await journal.remove(new Set([id]))) > 0) return true;
    try {
      const { credential, budgets } = resolveSpend(this.#d.config, { ...outcome, entry: id }, outcome.at);
      const r = await this.#d.ledger.void({
        entry: { key: entryKey(credential.id, id), id },
        budgets: budgets.map(({ key, windowMs }) => ({ key, windowMs })),
      });
      return r.outcome !== 'none';
    } catch (e) {
      if (!isStoreDown(e)) throw e;
      this.#d.logger.warn(
        { credential: outcome.credential, bucket: outcome.bucket, cost: outcome.cost, id },
        'ledger store unavailable: refund of a journalled spend lost (it counts until it ages out)',
      );
      return false;
    }
  }

  /** Resolve this store's journal lines (one pass at a time; a pass under way is joined). */
  replay(): Promise<ReplayResult> {
    this.#replaying ??= this.#replayOnce().finally(() => {
      this.#replaying = undefined;
    });
    return this.#replaying;
  }

  async #replayOnce(): Promise<ReplayResult> {
    const result: ReplayResult = { resolved: 0, recorded: 0, dropped: 0, left: 0, failed: 0 };
    const journal = this.#d.journal;
    const appended = this.#appended;
    if (!journal || journal.size() === 0) {
      this.#pending = this.#appended !== appended;
      return result;
    }
    const { entries, bad } = await journal.read();
    if (bad > 0) {
      this.#d.logger.warn(
        { journal: journal.path, lines: bad },
        'journal lines that are not entries skipped',
      );
    }
    const mine = entries.filter((e) => e.store === this.#store);
    const done = new Set<string>();
    for (const [i, e] of mine.entries()) {
      if (done.has(e.id)) continue;
      try {
        const late = await this.#resolve(e);
        if (late?.outcome === 'recorded') result.recorded++;
        if (late?.outcome === 'dropped') result.dropped++;
        result.resolved++;
        done.add(e.id);
      } catch (err) {
        if (isStoreDown(err)) {
          result.left = mine.length - i;
          break;
        }
        // It can never be resolved (a credential or bucket no longer configured, another request
        // under the same id): said, and taken out so that it does not block the rest.
        result.failed++;
        done.add(e.id);
        this.#error(
          { journal: journal.path, id: e.id, credential: e.body.credential, cost: e.body.cost },
          `journal entry dropped, it cannot be recorded: ${(err as Error).message}`,
        );
      }
    }
    await journal.remove(done);
    this.#pending = result.left > 0 || this.#appended !== appended;
    if (result.resolved > 0 || result.left > 0) {
      this.#d.logger.info(
        { journal: journal.path, ...result },
        result.left > 0
          ? 'journal partly replayed: the store failed again, the rest is replayed later'
          : 'journal replayed into the ledger',
      );
    }
    return result;
  }

  async #resolve(e: JournalEntry): Promise<LateRecord | undefined> {
    const b = e.body;
    const args = {
      credential: b.credential,
      bucket: b.bucket,
      ...(b.method !== undefined ? { method: b.method } : {}),
      tier: b.tier,
      cost: b.cost,
      tag: b.tag,
    };
    if (e.op === 'record') return this.record(args, e.id, b.at, 'journal');
    const ledger = this.#d.ledger;
    if (b.spend) {
      // Sent without an entry id: find its log entry by id first, so that it never counts twice.
      if (ledger.settle) {
        const found = await ledger.settle(b.spend, b.used !== true);
        if (found !== 'absent' || b.used !== true) return undefined;
      } else if (b.used !== true) return undefined;
      return this.record(args, e.id, b.at, 'journal');
    }
    // The caller's entry id: recorded if used (once, whether the spend landed or not), else voided.
    if (b.used === true) return this.record(args, e.id, b.at, 'journal');
    const { credential, budgets } = resolveSpend(this.#d.config, args, Math.min(b.at, this.#d.now()));
    await ledger.void({
      entry: { key: entryKey(credential.id, e.id), id: e.id },
      budgets: budgets.map(({ key, windowMs }) => ({ key, windowMs })),
    });
    return undefined;
  }
}
