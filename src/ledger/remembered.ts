/**
 * An entry's remembered decision, as both stores keep it: the spend script's reply, comma-separated
 * integers (Redis: the entry key's value before `|`; SQLite: `qg_spend_entry.remembered`).
 *
 *   allowed   1,<remaining>,<atMs>
 *   denied    0,<retryAfterMs>,<remaining>,<limitedByIndex>,<blockedUntilMs>,<atMs>
 *   void      0,0,0,1,0,<atMs>,1      (a denial with a seventh field: `Ledger.void`)
 *
 * A recorded entry (`Ledger.record`) is remembered as allowed with remaining 0. Fields past the ones
 * a reader knows are ignored (0.2.0 reads a void as a plain denial), so every shape here stays
 * readable by the previous release.
 */
import type { Decision } from './types.js';

/** The seventh field of a remembered denial that is a void (lua/includes/base.lua: VOID_MARK). */
export const VOID_MARK = 1;

/** What a remembered decision says, read from its fields. */
export interface Remembered {
  allowed: boolean;
  /** A void (`Ledger.void`): the caller said the entry was not used. */
  voided: boolean;
  /** When the decision was taken, or the entry recorded (epoch ms). */
  at: number;
}

export function parseRemembered(text: string): number[] {
  return text.split(',').map(Number);
}

export function remembered(r: readonly number[]): Remembered {
  const allowed = r[0] === 1;
  return { allowed, voided: !allowed && r[6] === VOID_MARK, at: (allowed ? r[2] : r[5]) ?? 0 };
}

/** The remembered form of a decision. */
export function rememberDecision(d: Decision): string {
  return d.allowed
    ? `1,${d.remaining},${d.at}`
    : `0,${d.retryAfterMs},${d.remaining},${d.keys.indexOf(d.limitedBy) + 1},${d.blockedUntil ?? 0},${d.at}`;
}

export const rememberRecord = (at: number): string => `1,0,${at}`;
export const rememberVoid = (at: number): string => `0,0,0,1,0,${at},${VOID_MARK}`;

/**
 * A decision from a script's reply or a remembered one (`r[0]` 1 allowed, 0 denied, in the shapes
 * above), for the spend `id` of `cost` over `keys`.
 */
export function decisionOf(
  r: readonly number[],
  spend: { id: string; keys: string[]; cost: number },
  replayed: boolean,
): Decision {
  const { id, keys, cost } = spend;
  if (r[0] === 1) {
    return {
      allowed: true,
      retryAfterMs: 0,
      remaining: r[1]!,
      id,
      keys,
      cost,
      at: r[2]!,
      ...(replayed ? { replayed: true as const } : {}),
    };
  }
  const d: Decision = {
    allowed: false,
    retryAfterMs: r[1]!,
    remaining: r[2]!,
    limitedBy: keys[r[3]! - 1] ?? keys[0]!,
    keys,
    cost,
    at: r[5]!,
  };
  if (r[4]! > 0) d.blockedUntil = r[4]!;
  if (replayed) d.replayed = true;
  if (r[6] === VOID_MARK) d.voided = true;
  return d;
}
