/**
 * What a client settles after the fact (docs/http-api.md, "Nothing unrecorded"):
 *
 * - `POST /v1/record`: a spend it made without the service's answer — failed open while the
 *   service or its store could not answer, or an unknown spend that it used — written into the
 *   ledger at the time it was made (`Ledger.record`: never denied, clamped to each window, once per
 *   entry id).
 * - `POST /v1/void`: an unknown spend it did not use — taken out if it landed, or remembered as
 *   void so that it never lands (`Ledger.void`).
 *
 * Both take the same token rules as a spend, and keep their entry under the credential's entry key,
 * where a spend of the same id finds it.
 */
import { bucketOf } from '../config/lookups.js';
import { entryKey } from '../guard/entries.js';
import type { Guard } from '../guard/guard.js';
import { bucketWindow, budgetKey } from '../guard/keys.js';
import { resolveSpend } from '../guard/resolve.js';
import { siteOf, withMethod } from '../guard/tags.js';
import type { SpendArgs } from '../guard/types.js';
import type { EntryBudget } from '../ledger/types.js';
import type { RecordBody, VoidBody } from './requests.js';
import { type ApiClient, mayUse } from './tokens.js';

/** Thrown for a request the token may not make (a 403), or an entry that is another's (a 404). */
export interface LateFailures {
  forbidden(message: string): Error;
  unknownEntry(entry: string): Error;
}

/**
 * The tag a spend of this body is written with: the token's name first, as `/v1/spend` writes it
 * (once: a tag that starts with it already, as a client that names its site after its token
 * writes, keeps it as it is).
 */
export function clientTag(
  client: ApiClient,
  body: { tag?: string; method?: string; bucket?: string },
): string {
  const tag = body.tag ?? body.method ?? body.bucket ?? '';
  return withMethod(siteOf(tag) === client.name ? tag : `${client.name}:${tag}`, body.method);
}

/** Whether an entry's tag says this client spent it (another's entry is as unknown as none). */
export function spentBy(tag: string | undefined, client: ApiClient): boolean {
  return tag !== undefined && siteOf(tag) === client.name;
}

export async function recordLate(
  guard: Guard,
  body: RecordBody,
  client: ApiClient,
  fail: LateFailures,
): Promise<Record<string, unknown>> {
  if (!mayUse(client, body.credential)) {
    throw fail.forbidden(`token '${client.name}' may not record for credential '${body.credential}'`);
  }
  if (!client.tiers.includes(body.tier)) {
    throw fail.forbidden(`token '${client.name}' may not spend the ${body.tier} tier`);
  }
  const args: SpendArgs = {
    credential: body.credential,
    tier: body.tier,
    tag: clientTag(client, body),
    entry: body.entry,
    ...(body.method !== undefined ? { method: body.method } : {}),
    ...(body.bucket !== undefined ? { bucket: body.bucket } : {}),
    ...(body.cost !== undefined ? { cost: body.cost } : {}),
  };
  const late = await guard.recordLate(args, body.entry, body.at, 'client');
  return {
    entry: body.entry,
    outcome: late.outcome,
    at: late.at,
    credential: late.credential,
    bucket: late.bucket,
    cost: late.cost,
    tag: late.tag,
  };
}

export async function voidLate(
  guard: Guard,
  body: VoidBody,
  client: ApiClient,
  fail: LateFailures,
  nowMs: number,
): Promise<Record<string, unknown>> {
  if (!mayUse(client, body.credential)) {
    throw fail.forbidden(`token '${client.name}' may not void for credential '${body.credential}'`);
  }
  const credential = guard.config.credential(body.credential);
  const spent = await guard.recallEntry(credential.id, body.entry);
  let budgets: EntryBudget[];
  if (spent) {
    // Another client's entry is as unknown to this one as an entry never spent.
    if (!spentBy(spent.tag, client)) throw fail.unknownEntry(body.entry);
    budgets = resolveSpend(guard.config, spent, nowMs).budgets.map(({ key, windowMs }) => ({
      key,
      windowMs,
    }));
  } else {
    // Never spent (yet): remembered as void for as long as any of the credential's entries is.
    budgets = [
      ...Object.keys(credential.buckets).map((id) => {
        const w = bucketWindow(credential, bucketOf(credential, id), nowMs);
        return { key: w.key, windowMs: w.windowMs };
      }),
      ...credential.budgets.map((b) => ({ key: budgetKey(credential.id, b.id), windowMs: b.windowMs })),
    ];
  }
  const r = await guard.ledger.void({
    entry: { key: entryKey(credential.id, body.entry), id: body.entry },
    budgets,
  });
  return { entry: body.entry, outcome: r.outcome };
}
