/**
 * The `Ledger` every caller gets: checks input, assigns entry ids, then hands over to a backend.
 * Keeping this above the stores means a bad call fails identically on Redis and SQLite, and never
 * reaches either.
 */

import { QuotaGuardError } from '../errors.js';
import { idFactory, type LedgerBackend } from './backend.js';
import type {
  Decision,
  LateSummary,
  Ledger,
  LedgerKind,
  MinuteUnits,
  PeekRequest,
  PerMinuteRequest,
  RecordRequest,
  RecordResult,
  Settlement,
  Snapshot,
  SpendRequest,
  UnsettledSpend,
  VoidRequest,
  VoidResult,
} from './types.js';
import {
  validateBlock,
  validateFreesUpIn,
  validateKey,
  validatePeek,
  validatePerMinute,
  validateRecord,
  validateRefund,
  validateSpend,
  validateVoid,
} from './validate.js';

export class CheckedLedger implements Ledger {
  readonly kind: LedgerKind;
  readonly #backend: LedgerBackend;
  readonly #newId = idFactory();
  #closed = false;

  constructor(backend: LedgerBackend) {
    this.#backend = backend;
    this.kind = backend.kind;
  }

  spend(req: SpendRequest): Promise<Decision> {
    // Not async (one promise less on the hot path), so a bad input must become a rejection here.
    try {
      const { budgets, cost, tag, entry } = validateSpend(req);
      if (entry) return this.#backend.spend({ budgets, cost, tag, id: `${entry.id}:${cost}:${tag}`, entry });
      return this.#backend.spend({ budgets, cost, tag, id: this.#newId(cost, tag) });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  async refund(decision: Decision): Promise<boolean> {
    const r = validateRefund(decision);
    return r ? this.#backend.refund(r.keys, r.id) : false;
  }

  async settle(spend: UnsettledSpend, refund: boolean): Promise<Settlement> {
    const r = validateRefund({ allowed: true, retryAfterMs: 0, remaining: 0, ...spend });
    if (!r) throw new QuotaGuardError('QG_INTERNAL', 'settle: not a spend');
    if (this.#closed) throw new QuotaGuardError('QG_INTERNAL', 'settle: the ledger is closed');
    if (!this.#backend.settle) {
      throw new QuotaGuardError(
        'QG_INTERNAL',
        `settle: the ${this.kind} ledger never leaves a spend unsettled`,
      );
    }
    return this.#backend.settle(r.keys, r.id, refund);
  }

  async peek(req: PeekRequest): Promise<Snapshot> {
    const { key, windowMs } = validatePeek(req);
    return this.#backend.peek(key, windowMs, req.totalsOnly === true);
  }

  async block(key: string, untilEpochMs: number, reason?: string): Promise<void> {
    const b = validateBlock(key, untilEpochMs, reason);
    await this.#backend.block(b.key, b.untilEpochMs, b.reason);
  }

  async unblock(key: string): Promise<void> {
    await this.#backend.unblock(validateKey('key', key));
  }

  async freesUpIn(req: PeekRequest & { limit: number; amounts: number[] }): Promise<number[]> {
    const r = validateFreesUpIn(req);
    return this.#backend.freesUpIn(r.key, r.windowMs, r.limit, r.amounts);
  }

  async recallEntry(key: string): Promise<string | undefined> {
    return this.#backend.recallEntry(validateKey('key', key));
  }

  async record(req: RecordRequest): Promise<RecordResult> {
    const r = validateRecord(req);
    return this.#backend.record({ ...r, id: `${r.entry.id}:${r.cost}:${r.tag}` });
  }

  async void(req: VoidRequest): Promise<VoidResult> {
    return this.#backend.void(validateVoid(req));
  }

  async late(req: PeekRequest): Promise<LateSummary> {
    const { key, windowMs } = validatePeek(req);
    return this.#backend.late(key, windowMs);
  }

  async perMinute(req: PerMinuteRequest): Promise<MinuteUnits[]> {
    const r = validatePerMinute(req);
    const grid =
      r.minuteMs === undefined
        ? { minuteMs: 60_000, originMs: 0 }
        : { minuteMs: r.minuteMs, originMs: r.fromMs };
    return this.#backend.perMinute(r.key, r.windowMs, r.fromMs, r.toMs, grid);
  }

  async ping(): Promise<void> {
    await this.#backend.ping();
  }

  waitingFor(): string | undefined {
    return this.#backend.waitingFor?.();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#backend.close();
  }
}
