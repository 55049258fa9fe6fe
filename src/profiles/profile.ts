/**
 * A quota profile as data, for any upstream: its buckets with their daily quotas, each method's
 * bucket and cost, the time zone its day runs in, and its own names for its buckets (how a quota
 * answer that names one is turned into the bucket to block). The built-in YouTube profiles are in
 * profiles.ts; a config's `profiles:` section defines others in the same form (schema.ts).
 */

import type * as z from 'zod';
import type { profileSchema } from './schema.js';

/** A profile's id: a built-in one or one defined in the config. */
export type ProfileId = string;

export interface BucketSpec {
  /** Units per day. */
  quota: number;
}

export interface MethodSpec {
  bucket: string;
  cost: number;
}

export interface QuotaProfile {
  id: ProfileId;
  description: string;
  /** Where the upstream's day starts and ends. */
  timeZone: string;
  /** The bucket every method not listed elsewhere spends. */
  defaultBucket: string;
  buckets: Record<string, BucketSpec>;
  methods: Record<string, MethodSpec>;
  /**
   * What the upstream calls each bucket's quota: how a quota answer that names a metric or limit
   * is turned into the bucket to block (`bucketOfUpstreamQuota`), and how the simulator names it.
   */
  upstreamNames: Record<string, UpstreamQuotaNames>;
  /**
   * The metric that counts the upstream's use of the quotas per minute (Cloud Monitoring's
   * `serviceruntime.googleapis.com/quota/rate/net_usage`), each bucket's series named by its
   * `upstreamNames` metric: what `quota-guard reconcile` reads. Undefined: not reconciled.
   */
  usageMetric?: string;
}

/** The upstream's names for one bucket's daily quota. */
export interface UpstreamQuotaNames {
  /** Display name of the quota metric, as messages give it: `Search Queries`. */
  displayName: string;
  /** The metric id, as ErrorInfo `quota_metric` gives it: `youtube.googleapis.com/search_list`. */
  metric?: string;
  /** The per-day limit, as ErrorInfo `quota_limit` gives it: `defaultSearchListPerDayPerProject`. */
  limit?: string;
  /** Further spellings that name the same bucket. */
  aliases?: readonly string[];
}

/** What `profiles.<id>` holds in a config file. */
export type ProfileData = z.input<typeof profileSchema>;

/** A profile's data as the schema returns it (defaults filled in). */
export type ValidProfileData = z.output<typeof profileSchema>;

/** A profile from its validated data. */
export function toProfile(id: ProfileId, data: ValidProfileData): QuotaProfile {
  const upstreamNames: Record<string, UpstreamQuotaNames> = {};
  for (const [bucket, n] of Object.entries(data.upstreamNames)) {
    upstreamNames[bucket] = {
      displayName: n.displayName,
      ...(n.metric !== undefined ? { metric: n.metric } : {}),
      ...(n.limit !== undefined ? { limit: n.limit } : {}),
      ...(n.aliases !== undefined ? { aliases: n.aliases } : {}),
    };
  }
  return {
    id,
    description: data.description,
    timeZone: data.timeZone,
    defaultBucket: data.defaultBucket,
    buckets: data.buckets,
    methods: data.methods,
    upstreamNames,
    ...(data.usageMetric !== undefined ? { usageMetric: data.usageMetric } : {}),
  };
}

/** A profile back as data (what `profiles.<id>` would hold to define it). */
export function profileData(p: QuotaProfile): ProfileData {
  return structuredClone({
    description: p.description,
    timeZone: p.timeZone,
    defaultBucket: p.defaultBucket,
    buckets: p.buckets,
    methods: p.methods,
    upstreamNames: p.upstreamNames as ProfileData['upstreamNames'],
    ...(p.usageMetric !== undefined ? { usageMetric: p.usageMetric } : {}),
  });
}

/**
 * One key for the many spellings of a quota metric or limit: the last path segment, without the
 * `default` prefix and the `Per…` / "per …" period suffix, lower-cased letters and digits only.
 * `youtube.googleapis.com/search_list`, `defaultSearchListPerDayPerProject` → `searchlist`.
 */
export function upstreamNameKey(name: string): string {
  const last = name.slice(name.lastIndexOf('/') + 1);
  const base = last.replace(/(Per[A-Z0-9].*| per .*)$/, '');
  const stripped = base.replace(/^default(?=[A-Z])/, '');
  return stripped.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/**
 * The profile bucket a quota answer names (its metric first, then its limit), or undefined when the
 * profile does not know the name.
 */
export function bucketOfUpstreamQuota(
  profile: QuotaProfile,
  quota: { metric?: string; limit?: string },
): string | undefined {
  const keys = new Map<string, string>();
  for (const [bucket, n] of Object.entries(profile.upstreamNames)) {
    for (const name of [n.displayName, n.metric, n.limit, ...(n.aliases ?? [])]) {
      if (name !== undefined) keys.set(upstreamNameKey(name), bucket);
    }
  }
  for (const name of [quota.metric, quota.limit]) {
    const bucket = name === undefined ? undefined : keys.get(upstreamNameKey(name));
    if (bucket !== undefined) return bucket;
  }
  return undefined;
}

/** The bucket and cost of a method under a profile, or undefined when the profile does not offer it. */
export function methodSpec(profile: QuotaProfile, method: string): MethodSpec | undefined {
  // A name is data: `constructor` is a method no profile offers, not a property of every object.
  return Object.hasOwn(profile.methods, method) ? profile.methods[method] : undefined;
}
