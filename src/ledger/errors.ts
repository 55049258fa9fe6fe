/** Typed errors specific to the ledger (codes live in src/errors.ts and docs/errors.md). */
import { QuotaGuardError } from '../errors.js';

/** A spend or peek passed a window different from the key's fixed window. */
export class WindowMismatchError extends QuotaGuardError {
  override name = 'WindowMismatchError';
  readonly key: string;
  readonly storedWindowMs: number;
  readonly requestedWindowMs: number;
  constructor(key: string, storedWindowMs: number, requestedWindowMs: number, field = 'windowMs') {
    super(
      'QG_WINDOW_MISMATCH',
      `${field}: key '${key}' has a window of ${storedWindowMs} ms, not ${requestedWindowMs} ms ` +
        '(the window of a key is fixed; use another key for another window)',
      { field, details: { key, storedWindowMs, requestedWindowMs } },
    );
    this.key = key;
    this.storedWindowMs = storedWindowMs;
    this.requestedWindowMs = requestedWindowMs;
  }
}

/** In Redis Cluster, the keys of one spend would land in different hash slots. */
export class CrossSlotError extends QuotaGuardError {
  override name = 'CrossSlotError';
  constructor(keys: readonly string[], slots: readonly number[]) {
    super(
      'QG_CROSS_SLOT',
      `budgets: keys ${keys.map((k) => `'${k}'`).join(', ')} land in different Redis Cluster slots ` +
        `(${slots.join(', ')}); give them one {hash tag}, e.g. 'yt:{cred}:units' and 'yt:{cred}:search'`,
      { field: 'budgets', details: { keys: [...keys], slots: [...slots] } },
    );
  }
}
