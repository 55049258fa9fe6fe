/**
 * The schema of a profile as data (zod): a config's `profiles.<id>`, and the form the built-in
 * profiles are written in. A module of its own so that what only uses profiles (the guard, a
 * command on the built-in defaults) does not load zod.
 */
import * as z from 'zod';
import { isValidTimeZone } from '../calendar-day.js';

const name = z.string().min(1).max(100);
const units = z.number().int().positive();

/**
 * A profile as data: a config's `profiles.<id>`, and the form the built-in profiles are written in
 * (`BUILTIN_DATA`). Every bucket a method, the default or an upstream name refers to must exist.
 */
export const profileSchema = z
  .strictObject({
    description: z.string().max(500).default(''),
    timeZone: z.string().refine(isValidTimeZone, 'must be a time zone such as America/Los_Angeles'),
    defaultBucket: name,
    buckets: z
      .record(name, z.strictObject({ quota: units }))
      .refine((b) => Object.keys(b).length > 0, 'must name at least one bucket'),
    methods: z.record(name, z.strictObject({ bucket: name, cost: units })),
    upstreamNames: z
      .record(
        name,
        z.strictObject({
          displayName: name,
          metric: name.optional(),
          limit: name.optional(),
          aliases: z.array(name).optional(),
        }),
      )
      .default({}),
  })
  .superRefine((p, ctx) => {
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
  });
