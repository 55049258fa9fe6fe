/**
 * Config parts: one config file serves the core and the applications built on it. The core reads
 * its keys (store, profiles, credentials, budgets, expected, maxSleep, storeDown); an application
 * registers a part for its own (the YouTube application: regions, categories, schedules, cache,
 * upstream, backfill), each with its zod schema (defaults filled in there) and a resolver that
 * checks what depends on the core's settings. `loadConfig` and `parseConfig` run the core and every
 * part together, so one pass reports every mistake in the file; a key no part owns is unknown.
 *
 * A part is two values: its resolver (no zod in it, so a command that starts from the embedded
 * defaults does not load zod) and its schema's shape. A part's settings are put on the config
 * object beside the core's (its functions non-enumerable, as the core's lookups are), and its name
 * in `config.parts`; the application reads them through its own typed view of the config.
 */
import type * as z from 'zod/mini';
import type { Holey } from './lenient.js';
import type { Problems } from './problems.js';
import type { Config, Env } from './types.js';

/** The core's settings, resolved, as a part's resolver sees them. */
export type CoreSettings = Omit<Config, 'credential' | 'apiKey' | 'parts' | 'source'>;

export interface PartContext {
  env: Env;
  /** The config file, for paths relative to it (undefined: the embedded defaults or a value). */
  source: string | undefined;
  /** Where the part adds its problems (each with its path in the file). */
  problems: Problems;
  /** What the core resolved: credentials with their buckets, methods and budgets. */
  core: CoreSettings;
}

/** A top-level list may have holes where the schema refused an element (lenient.ts). */
export type WithHoles<T> = { [K in keyof T]: T[K] extends ReadonlyArray<infer E> ? Holey<E> : T[K] };

/** What a part's resolver is given: its keys as its schema returned them. */
export type PartInput<Shape extends z.core.$ZodShape> = WithHoles<
  z.output<z.ZodMiniObject<Shape, z.core.$strict>>
>;

/** A part's resolver: its settings from what its schema returned. */
export interface PartResolver<Input = never, Out extends object = object> {
  /** Its name in `config.parts`, e.g. `youtube`. */
  readonly name: string;
  /** The top-level keys it owns. */
  readonly keys: readonly string[];
  /**
   * Its settings, put on the config beside the core's (functions as non-enumerable lookups). Every
   * problem goes to `ctx.problems` with its path; a resolver throws only for a bug.
   */
  resolve(raw: Input, ctx: PartContext): Out;
}

/** A part: its resolver and the schema of its keys. */
export interface ConfigPart<Shape extends z.core.$ZodShape = z.core.$ZodShape, Out extends object = object>
  extends PartResolver<PartInput<Shape>, Out> {
  readonly shape: Shape;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds parts of every input type.
export type AnyPart = ConfigPart<any, object>;
// biome-ignore lint/suspicious/noExplicitAny: likewise for resolvers.
export type AnyResolver = PartResolver<any, object>;

/**
 * The top-level keys of the parts this package's own applications register, by part. A program
 * that loaded none of them (a Node job that imports only the core) still reads a file written for
 * them: their keys are left unchecked and unused, as a file of the previous release meant them,
 * and the part checks them wherever it is loaded. A test keeps this list equal to the parts' own.
 */
export const PACKAGED_PART_KEYS: Readonly<Record<string, readonly string[]>> = {
  youtube: ['cache', 'upstream', 'regions', 'categories', 'schedules', 'backfill'],
};

const registered = new Map<string, AnyPart>();

/**
 * Register a part: `loadConfig` and `parseConfig` read its keys from then on when they are not
 * given their parts. An application registers its own when it is imported (the YouTube
 * application, when `quota-guard/youtube` is); registering a part again under its name replaces it.
 */
export function registerConfigPart(part: AnyPart): void {
  registered.set(part.name, part);
}

/** The registered parts, in the order they were registered. */
export function registeredParts(): AnyPart[] {
  return [...registered.values()];
}
