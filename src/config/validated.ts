/**
 * The second half of reading a config: from what the schema returned (shapes checked, defaults
 * filled in) to a Config, with every cross-reference resolved and checked (resolve.ts). No zod
 * here, so a caller that already holds validated data does not load it: the CLI bundle embeds what
 * the schema returns for an empty config (`embeddedDefaults`), and a command run on the built-in
 * defaults starts from that.
 */
import { ConfigError } from '../errors.js';
import { withLookups } from './lookups.js';
import { Problems } from './problems.js';
import { resolve } from './resolve.js';
import type { RawConfig } from './schema.js';
import type { Config, Env } from './types.js';

export interface ParseConfigOptions {
  env?: Env;
  /** Shown before each problem (the file name). */
  source?: string;
}

/** Resolve what the schema returned. Throws ConfigError (exit 78) with one line per problem. */
export function resolveValidated(data: RawConfig, options: ParseConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const prefix = options.source ? `${options.source}: ` : '';
  const problems = new Problems();
  const resolved = resolve(data, env, problems, options.source);
  if (problems.list.length) {
    throw new ConfigError(
      problems.list.map((p) => prefix + p.text),
      problems.code(),
    );
  }
  return withLookups(resolved, env, options.source);
}

/**
 * Set by scripts/bundle-cli.mjs to the JSON of what `configSchema.parse({})` returns when the CLI
 * is bundled; not defined when the sources run as they are.
 */
declare const QUOTA_GUARD_VALIDATED_DEFAULTS: string | undefined;

/** What the schema returns for an empty config, when the build embedded it; else undefined. */
export function embeddedDefaults(): RawConfig | undefined {
  return typeof QUOTA_GUARD_VALIDATED_DEFAULTS === 'undefined'
    ? undefined
    : (JSON.parse(QUOTA_GUARD_VALIDATED_DEFAULTS) as RawConfig);
}
