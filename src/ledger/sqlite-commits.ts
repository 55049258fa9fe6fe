/**
 * How the SQLite ledger's operations reach the file: in the order they were called, in as few
 * transactions as it takes, each answered only once its transaction has committed.
 *
 * - **Group commit.** Operations called while a transaction is waiting or running (the spends of
 *   one tick, or of callers that queued up behind another process's lock) go into the next one
 *   together, each in a savepoint of its own: an operation that fails (a window mismatch) is rolled
 *   back alone, and the others commit. With `synchronous = FULL` a commit costs a sync of the WAL,
 *   so the sync is shared instead of paid per spend; a caller that awaits each spend gets a
 *   transaction of its own, as before.
 * - **Answered after the commit.** Every answer, allowed or not, is handed out once `COMMIT` has
 *   returned: a commit the disk refuses fails every operation of the transaction
 *   (`QG_STORE_UNAVAILABLE`), none is answered allowed (docs/sqlite.md, "Durability").
 * - **Waiting for another process's lock without blocking the event loop.** The connection's own
 *   busy timeout is 0; a transaction whose `BEGIN` finds the lock taken (SQLITE_BUSY: nothing has
 *   run yet) is tried again after 1–8 ms, with whatever was called meanwhile, until an operation has
 *   waited `busyTimeoutMs`. SQLite's own wait sleeps the thread in steps growing to 100 ms, during
 *   which the other processes take the lock again: with a sync per commit, four processes spending
 *   flat out made one of them fail after the whole timeout.
 */
import type Database from 'better-sqlite3';
import { type StoreLabel, storeFailure } from '../sqlite/index.js';

/** At most this many operations share one transaction (how long the lock is held). */
const MAX_BATCH = 64;

interface Operation {
  what: string;
  fn: () => unknown;
  write: boolean;
  /** When it has waited long enough for the lock (performance.now()). */
  deadline: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Another connection holds the lock (SQLITE_BUSY and its extended codes), as storeFailure maps it. */
function isBusy(e: unknown): boolean {
  const code = (e as { details?: { sqliteCode?: unknown } } | null)?.details?.sqliteCode;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

export class Commits {
  readonly #label: StoreLabel;
  readonly #busyTimeoutMs: number;
  /** Called after each transaction, with whether it committed (the ledger reports a clock step there). */
  readonly #ended: (committed: boolean) => void;
  /** One transaction wrapper, made once: it runs the function it is given (nested: a savepoint). */
  readonly #tx: Database.Transaction<(fn: () => unknown) => unknown>;
  readonly #queue: Operation[] = [];
  #draining = false;
  #busySince: number | undefined;

  constructor(
    db: Database.Database,
    label: StoreLabel,
    busyTimeoutMs: number,
    ended: (committed: boolean) => void,
  ) {
    this.#label = label;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#ended = ended;
    this.#tx = db.transaction((fn: () => unknown) => fn());
    // The wait for another process's lock is this queue's (the file was opened, and migrated, with it).
    db.pragma('busy_timeout = 0');
  }

  /** Since when (performance.now()) writes have found the lock another process's; undefined when not. */
  get busySince(): number | undefined {
    return this.#busySince;
  }

  /** Run `fn` in a transaction (BEGIN IMMEDIATE when `write`, else DEFERRED); its result once committed. */
  run<T>(what: string, fn: () => T, write: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({
        what,
        fn,
        write,
        deadline: performance.now() + this.#busyTimeoutMs,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (!this.#draining) {
        this.#draining = true;
        queueMicrotask(() => void this.#drain());
      }
    });
  }

  async #drain(): Promise<void> {
    try {
      let attempt = 0;
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_BATCH);
        const busy = this.#transaction(batch);
        if (busy === undefined) {
          attempt = 0;
          this.#busySince = undefined;
          continue;
        }
        this.#busySince ??= performance.now();
        // The lock is another process's: what has waited long enough fails, the rest waits on.
        const now = performance.now();
        const waiting = batch.filter((op) => {
          if (now < op.deadline) return true;
          op.reject(storeFailure(busy, this.#label, op.what));
          return false;
        });
        this.#queue.unshift(...waiting);
        if (this.#queue.length > 0) await sleep(1 + Math.random() * Math.min(7, 2 ** attempt++));
      }
    } finally {
      this.#draining = false;
      this.#busySince = undefined;
    }
  }

  /**
   * One transaction for `batch`, settling each operation; or, when its BEGIN found the lock taken
   * (nothing ran), that error, and nothing settled.
   */
  #transaction(batch: Operation[]): unknown {
    const outcomes: Outcome[] = [];
    const one = batch.length === 1;
    const body = () => {
      for (const op of batch) {
        // Alone, an operation that throws rolls the transaction back; with others, its savepoint.
        if (one) outcomes.push({ ok: true, value: op.fn() });
        else {
          try {
            outcomes.push({ ok: true, value: this.#tx(op.fn) });
          } catch (e) {
            outcomes.push({ ok: false, error: storeFailure(e, this.#label, op.what) });
          }
        }
      }
    };
    try {
      if (batch.some((op) => op.write)) this.#tx.immediate(body);
      else this.#tx.deferred(body);
    } catch (e) {
      this.#ended(false);
      if (outcomes.length === 0 && isBusy(storeFailure(e, this.#label, batch[0]!.what))) return e;
      for (const op of batch) op.reject(storeFailure(e, this.#label, op.what));
      return undefined;
    }
    this.#ended(true);
    batch.forEach((op, i) => {
      const o = outcomes[i]!;
      if (o.ok) op.resolve(o.value);
      else op.reject(o.error);
    });
    return undefined;
  }
}
