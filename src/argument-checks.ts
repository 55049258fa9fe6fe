/**
 * Checks of what a library caller passes: the ledger's requests, the upstream client's and the
 * cache's options. One wording for each mistake, whichever part of the library is called: an
 * InvalidArgumentError naming the field and the value it got.
 */
import { InvalidArgumentError } from './errors.js';

/** A value as an error message shows it: short strings quoted, other objects by their type. */
export function describeValue(v: unknown): string {
  if (typeof v === 'string') return `'${v.length > 40 ? `${v.slice(0, 40)}…` : v}'`;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) return String(v);
  return typeof v;
}

/** The check of positiveInt without the error, so hot paths build field names only on failure. */
export function isPositiveInt(v: unknown, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= max;
}

/** `v` when it is an integer from 1 to `max`, else an InvalidArgumentError naming `field`. */
export function positiveInt(field: string, v: unknown, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) {
    throw new InvalidArgumentError(field, `must be an integer >= 1, got ${describeValue(v)}`);
  }
  if (v > max) throw new InvalidArgumentError(field, `must be at most ${max}, got ${v}`);
  return v;
}

/** An optional integer option: `fallback` when it is not given, else checked as positiveInt. */
export function positiveIntOption(
  field: string,
  v: number | undefined,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  return v === undefined ? fallback : positiveInt(field, v, max);
}
