/**
 * Spends with an entry id chosen by the caller (a job in another process, the decision API's
 * client): the ledger remembers each with its first decision, so a spend sent again is charged once.
 * The entry key shares the credential's hash tag, so it is written in the spend's own atomic step.
 */
import type { Tier } from '../config/types.js';
import { credentialKeyPrefix } from './keys.js';
import type { SpendOutcome } from './types.js';

/** Where a credential's entry `id` is remembered. */
export function entryKey(credential: string, id: string): string {
  return `${credentialKeyPrefix(credential)}:entry:${id}`;
}

/** What an entry's spend was: the same id with anything else different is a conflict. */
export type EntryRequest = Pick<SpendOutcome, 'credential' | 'bucket' | 'method' | 'tier' | 'cost' | 'tag'>;

/** The request as remembered (one JSON array, fields in a fixed order). */
export function entryRequest(r: EntryRequest): string {
  return JSON.stringify([r.credential, r.bucket, r.method ?? null, r.tier, r.cost, r.tag]);
}

/** The remembered request back, or undefined when it is not one `entryRequest` wrote. */
export function parseEntryRequest(text: string): EntryRequest | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(v) || v.length !== 6) return undefined;
  const [credential, bucket, method, tier, cost, tag] = v as unknown[];
  if (typeof credential !== 'string' || typeof bucket !== 'string' || typeof tag !== 'string')
    return undefined;
  if (typeof tier !== 'string' || typeof cost !== 'number') return undefined;
  return {
    credential,
    bucket,
    ...(typeof method === 'string' ? { method } : {}),
    tier: tier as Tier,
    cost,
    tag,
  };
}
