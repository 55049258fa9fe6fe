/**
 * A config written in code: `defineConfig(input)` takes what a config file may hold, typed (the
 * schema's input: every key the file may leave out is optional, durations and amounts take their
 * file forms), and checks and resolves it as `loadConfig` does a file. A misspelt key or a value of
 * the wrong kind is a compile error; what only the whole config can tell (a reserve above its
 * quota, a method the profile does not know) is the same `ConfigError` a file gets. `parseConfig`
 * keeps taking `unknown`, for what was read from somewhere.
 */
import type * as z from 'zod/mini';
import { type ParseConfigOptions, parseConfig } from './load.js';
import type { coreShape } from './schema.js';
import type { Config } from './types.js';

/** What the core's keys of a config file may hold, as a type. */
export type ConfigInput = z.input<z.ZodMiniObject<typeof coreShape, z.core.$strict>>;

export function defineConfig(input: ConfigInput, options: ParseConfigOptions = {}): Config {
  return parseConfig(input, options);
}
