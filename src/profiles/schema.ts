/**
 * The schema of a profile as data (zod): a config's `profiles.<id>`, and the form the built-in
 * profiles are written in. A module of its own so that what only uses profiles (the guard, a
 * command on the built-in defaults) does not load zod.
 */

import * as z from 'zod/mini';
import { isValidTimeZone } from '../calendar-day.js';
import '../zod-mini.js';

const name = z.string().check(z.minLength(1), z.maxLength(100));
const units = z.number().check(z.int(), z.positive());

/**
 * A profile as data: a config's `profiles.<id>`, and the form the built-in profiles are written in
 * (`BUILTIN_DATA`). Every bucket a method, the default or an upstream name refers to must exist.
 */
export const profileSchema = z
  .strictObject({
    description: z._default(z.string().check(z.maxLength(500)), ''),
    timeZone: z.string().check(z.refine(isValidTimeZone, 'must be a time zone such as America/Los_Angeles')),
    defaultBucket: name,
    buckets: z
      .record(name, z.strictObject({ quota: units }))
      .check(z.refine((b) => Object.keys(b).length > 0, 'must name at least one bucket')),
    methods: z.record(name, z.strictObject({ bucket: name, cost: units })),
    /**
     * The metric that counts the upstream's use of these quotas per minute, per quota metric (the
     * bucket's `upstreamNames.<bucket>.metric`), for `quota-guard reconcile`: Google's
     * `serviceruntime.googleapis.com/quota/rate/net_usage`. Omitted: the profile is not reconciled.
     */
    usageMetric: z.optional(name),
    upstreamNames: z._default(
      z.record(
        name,
        z.strictObject({
          displayName: name,
          metric: z.optional(name),
          limit: z.optional(name),
          aliases: z.optional(z.array(name)),
        }),
      ),
      {},
    ),
  })
  .check(
    z.superRefine((p, ctx) => {
      const known = Object.keys(p.buckets);
      const check = (bucket: string, path: Array<string | number>) => {
        if (!Object.hasOwn(p.buckets, bucket))
          ctx.addIssue({
            code: 'custom',
            path,
            message: `unknown bucket '${bucket}' (the profile's buckets: ${known.join(', ')})`,
          });
      };
      check(p.defaultBucket, ['defaultBucket']);
      for (const [m, spec] of Object.entries(p.methods)) check(spec.bucket, ['methods', m, 'bucket']);
      for (const bucket of Object.keys(p.upstreamNames)) check(bucket, ['upstreamNames', bucket]);
    }),
  );
