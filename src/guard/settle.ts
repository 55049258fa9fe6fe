/**
 * Settles spends whose answer never came (see UnsettledSpend): once the store answers again, it
 * asks the ledger what became of each one — and takes it out when the caller never went on to the
 * upstream, so that what the ledger records is what the upstream charged. Runs in the background,
 * one store call at a time, and never keeps a process alive (its timer is unref'd).
 */
import { isQuotaGuardError } from '../errors.js';
import type { Ledger, Settlement, UnsettledSpend } from '../ledger/types.js';

/** Pause between attempts while the store is still away (ms). */
const RETRY_MS = 200;

/** More pending spends than this are given up at once (memory stays bounded during a long outage). */
const MAX_UNSETTLED = 10_000;

export interface Unsettled<T> {
  spend: UnsettledSpend;
  /** Take the entry out if it landed (the caller did not call the upstream). */
  refund: boolean;
  /** Give up after this time (epoch ms): the entry has left its window by then. */
  until: number;
  /** What the caller attached (the guard's outcome). */
  about: T;
}

export type SettleResult = Settlement | 'abandoned';

export class Settler<T> {
  readonly #ledger: Ledger;
  readonly #now: () => number;
  readonly #done: (item: Unsettled<T>, result: SettleResult, error?: unknown) => void;
  readonly #pending = new Map<string, Unsettled<T>>();
  #timer: NodeJS.Timeout | undefined;
  #draining: Promise<void> | undefined;

  constructor(
    ledger: Ledger,
    now: () => number,
    done: (item: Unsettled<T>, result: SettleResult, error?: unknown) => void,
  ) {
    this.#ledger = ledger;
    this.#now = now;
    this.#done = done;
  }

  get size(): number {
    return this.#pending.size;
  }

  add(spend: UnsettledSpend, refund: boolean, about: T): void {
    const item = { spend, refund, until: this.#now() + spend.windowMs, about };
    if (this.#pending.size >= MAX_UNSETTLED) {
      this.#done(item, 'abandoned');
      return;
    }
    this.#pending.set(spend.id, item);
    this.#schedule();
  }

  /** The caller did not call the upstream after all: take the entry out if it landed. */
  refundInstead(id: string): boolean {
    const item = this.#pending.get(id);
    if (item) item.refund = true;
    return item !== undefined;
  }

  /** Resolves when nothing is pending, or after `maxWaitMs`; returns how many are still pending. */
  async flush(maxWaitMs: number): Promise<number> {
    const deadline = this.#now() + maxWaitMs;
    while (this.#pending.size > 0 && this.#now() < deadline) {
      await (this.#draining ?? this.#drain());
      if (this.#pending.size > 0) await new Promise((r) => setTimeout(r, RETRY_MS));
    }
    return this.#pending.size;
  }

  #schedule(): void {
    if (this.#timer || this.#draining) return;
    // Not at once: the store has just failed to answer.
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#drain();
    }, RETRY_MS);
    this.#timer.unref();
  }

  #drain(): Promise<void> {
    this.#draining ??= this.#settleAll().finally(() => {
      this.#draining = undefined;
      if (this.#pending.size > 0) this.#schedule();
    });
    return this.#draining;
  }

  async #settleAll(): Promise<void> {
    for (const [id, item] of this.#pending) {
      if (this.#now() > item.until) {
        this.#pending.delete(id);
        this.#done(item, 'abandoned');
        continue;
      }
      let result: Settlement;
      try {
        result = await this.#ledger.settle!(item.spend, item.refund);
      } catch (e) {
        // Still away: try again later, from the same spend.
        if (isQuotaGuardError(e) && e.code === 'QG_STORE_UNAVAILABLE') return;
        this.#pending.delete(id);
        this.#done(item, 'abandoned', e);
        continue;
      }
      this.#pending.delete(id);
      this.#done(item, result);
    }
  }
}
