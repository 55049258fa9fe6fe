/**
 * Codes the ledger scripts return. Lua cannot throw typed errors, so a script that meets a domain
 * failure returns `{ code, index }` with a negative `code` from this list (the Lua files use the
 * same numbers; `lua/includes/base.lua` mirrors them). `ledgerFailure` turns them into errors, in
 * one place, for every backend.
 */
import { QuotaGuardError } from '../errors.js';
import { WindowMismatchError } from './errors.js';

export const LedgerCode = {
  /** The key's stored window differs from the `windowMs` the caller passed. */
  WindowMismatch: -1,
  /** A stored value could not be parsed (not written by this ledger, or damaged). */
  Corrupt: -2,
  /** A spend's entry id was remembered with another request. */
  EntryConflict: -3,
  /** A recall-only spend names an entry the store does not remember (never spent, or expired). */
  EntryUnknown: -4,
} as const;
export type LedgerCode = (typeof LedgerCode)[keyof typeof LedgerCode];

export interface LedgerFailure {
  code: number;
  /** The key the failure is about. */
  key: string;
  /** Extra numbers the script returned (for WindowMismatch: the stored window). */
  detail?: number;
  /** The window the caller passed, when relevant. */
  windowMs?: number;
  /** The field of the request the failure is about, e.g. `budgets[1].windowMs`. */
  field?: string;
  /** The entry id (for EntryConflict and EntryUnknown). */
  entry?: string;
}

/** The one place where a negative script code becomes a typed error. */
export function ledgerFailure(f: LedgerFailure): QuotaGuardError {
  switch (f.code) {
    case LedgerCode.WindowMismatch:
      return new WindowMismatchError(f.key, f.detail ?? Number.NaN, f.windowMs ?? Number.NaN, f.field);
    case LedgerCode.Corrupt:
      return new QuotaGuardError(
        'QG_STORE_CORRUPT',
        `ledger key '${f.key}' holds data this ledger cannot read`,
        {
          details: { key: f.key },
        },
      );
    case LedgerCode.EntryConflict:
      return new QuotaGuardError(
        'QG_ENTRY_CONFLICT',
        `entry '${f.entry ?? '?'}' was spent with another request: an entry id names one spend`,
        { field: 'entry', details: { entry: f.entry } },
      );
    case LedgerCode.EntryUnknown:
      return new QuotaGuardError(
        'QG_ENTRY_UNKNOWN',
        `entry '${f.entry ?? '?'}' is not known: never spent, or its window has passed`,
        { field: 'entry', details: { entry: f.entry } },
      );
    default:
      return new QuotaGuardError('QG_INTERNAL', `ledger script returned unknown code ${f.code}`, {
        details: { key: f.key, code: f.code },
      });
  }
}
