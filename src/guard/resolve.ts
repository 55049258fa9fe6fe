/**
 * What a spend asks for, resolved against the config: the credential, the bucket and cost of the
 * method (or the bucket asked for), the tier, the tag, and the ledger budgets one spend charges.
 * Misuse (an unknown tier, a method spending another bucket, a cost below 1) throws here, before
 * the ledger is asked.
 */
import { bucketOf, methodOf } from '../config/lookups.js';
import { DEFAULT_TIER, isTier, TIERS, type Tier } from '../config/tiers.js';
import type { BucketConfig, Config, CredentialConfig } from '../config/types.js';
import { InvalidArgumentError } from '../errors.js';
import { type SpendBudget, spendBudgets } from './keys.js';
import type { SpendArgs, SpendOutcome } from './types.js';

/** An outcome's fields known before the ledger answers. */
export type SpendBase = Omit<SpendOutcome, 'allowed' | 'reason' | 'retryAfterMs'>;

export interface ResolvedSpend {
  credential: CredentialConfig;
  bucket: BucketConfig;
  tier: Tier;
  cost: number;
  tag: string;
  /** The bucket at the tier's ceiling, its pace, and every narrower budget that covers the spend. */
  budgets: SpendBudget[];
  base: SpendBase;
}

export function resolveSpend(config: Config, args: SpendArgs, now: number): ResolvedSpend {
  if (typeof args.credential !== 'string') {
    // A caller in JavaScript that left it out would otherwise read "unknown credential 'undefined'".
    const ids = config.credentials.map((c) => c.id).join(', ');
    throw new InvalidArgumentError('credential', `required: the id of a configured credential (${ids})`);
  }
  const credential = config.credential(args.credential);
  const tier = args.tier ?? DEFAULT_TIER;
  if (!isTier(tier)) {
    throw new InvalidArgumentError('tier', `must be one of ${TIERS.join(', ')}, got '${String(tier)}'`);
  }
  let bucketId: string;
  let cost: number;
  if (args.method !== undefined) {
    const spec = methodOf(credential, args.method);
    if (args.bucket !== undefined && args.bucket !== spec.bucket) {
      throw new InvalidArgumentError(
        'bucket',
        `'${args.method}' spends bucket '${spec.bucket}', not '${args.bucket}'`,
      );
    }
    bucketId = spec.bucket;
    cost = args.cost ?? spec.cost;
  } else {
    bucketId = args.bucket ?? credential.defaultBucket;
    cost = args.cost ?? 1;
  }
  const bucket = bucketOf(credential, bucketId);
  if (!Number.isInteger(cost) || cost < 1) {
    throw new InvalidArgumentError('cost', `must be an integer >= 1, got ${String(cost)}`);
  }
  const tag = args.tag ?? args.method ?? bucketId;
  const budgets = spendBudgets(credential, bucket, args.method, tier, now);
  const base: SpendBase = {
    credential: credential.id,
    bucket: bucket.id,
    ...(args.method !== undefined ? { method: args.method } : {}),
    tier,
    cost,
    tag,
    ceiling: bucket.ceilings[tier],
    at: now,
    ...(args.entry !== undefined ? { entry: args.entry } : {}),
  };
  return { credential, bucket, tier, cost, tag, budgets, base };
}
