/**
 * Priority tiers, as values: each says what it may spend of a bucket (its ceiling, from the bucket's
 * quota, reserve and headroom) and whether the guard paces it over the upstream's day. The guard,
 * the status and the plan ask a tier what it does; none of them compares a tier's name. The names
 * are what config files, spends, tokens and the decision API write: `scheduled`, `backfill`,
 * `manual`.
 */

/** What a tier's ceiling is computed from: one bucket's settings. */
export interface TierBucket {
  quota: number;
  reserve: number;
  /** Units held above the reserve from the tiers that leave headroom (`backfillHeadroom`). */
  headroom: number;
}

export interface TierSpec<Id extends string = string> {
  /** Its name in config files, spends, tokens and the decision API. */
  readonly id: Id;
  /** One line for people: who spends at this tier and up to where. */
  readonly description: string;
  /** The most the tier may have spent of a bucket in its window. */
  ceiling(bucket: TierBucket): number;
  /**
   * Paced over the upstream's day (src/guard/pacing.ts): what the schedules still need today is held
   * back from it, and its spend follows a line over the day.
   */
  readonly paced: boolean;
}

/** Jobs on a schedule: up to the quota less the reserve. The tier of a spend that names none. */
export const SCHEDULED_TIER: TierSpec<'scheduled'> = {
  id: 'scheduled',
  description: 'work on a schedule: up to the quota less the reserve',
  ceiling: (b) => b.quota - b.reserve,
  paced: false,
};

/** Work that can wait: below the scheduled ceiling by the headroom, paced over the day. */
export const BACKFILL_TIER: TierSpec<'backfill'> = {
  id: 'backfill',
  description: 'work that can wait: up to the quota less the reserve and the headroom, paced over the day',
  ceiling: (b) => b.quota - b.reserve - b.headroom,
  paced: true,
};

/** People: the whole quota, the reserve included. */
export const MANUAL_TIER: TierSpec<'manual'> = {
  id: 'manual',
  description: 'people: the whole quota, the reserve included',
  ceiling: (b) => b.quota,
  paced: false,
};

/** Every tier, lowest ceiling last but one: the order `status` shows them in. */
export const TIER_SPECS = [SCHEDULED_TIER, BACKFILL_TIER, MANUAL_TIER] as const;

/** The tiers' names. */
export const TIERS = TIER_SPECS.map((t) => t.id) as ['scheduled', 'backfill', 'manual'];
export type Tier = (typeof TIERS)[number];

/** The tier a spend without one is charged at. */
export const DEFAULT_TIER: Tier = SCHEDULED_TIER.id;

const BY_ID: ReadonlyMap<string, TierSpec<Tier>> = new Map(TIER_SPECS.map((t) => [t.id, t]));

/** The tier named `id`, or undefined for a name that is not one. */
export function tierSpec(id: string): TierSpec<Tier> | undefined {
  return typeof id === 'string' ? BY_ID.get(id) : undefined;
}

/** Whether `id` names a tier. */
export function isTier(id: unknown): id is Tier {
  return typeof id === 'string' && BY_ID.has(id);
}

/** Each tier's ceiling on one bucket. */
export function tierCeilings(bucket: TierBucket): Record<Tier, number> {
  return Object.fromEntries(TIER_SPECS.map((t) => [t.id, t.ceiling(bucket)])) as Record<Tier, number>;
}

/** The tier the guard paces (at most one is). */
export const PACED_TIER: TierSpec<Tier> | undefined = TIER_SPECS.find((t) => t.paced);
