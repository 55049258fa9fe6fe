/**
 * The second half of reading a config: from what the schema returned (shapes checked, defaults
 * filled in) to a Config, the core's settings and each part's, with every cross-reference resolved
 * and checked (resolve.ts, then each part's resolver). No zod here, so a caller that already holds
 * validated data does not load it: the CLI bundle embeds what the schema returns for an empty config
 * (`embeddedDefaults`), and a command run on the built-in defaults starts from that.
 */
import { ConfigError } from '../errors.js';
import { withLookups } from './lookups.js';
import type { AnyResolver } from './parts.js';
import { Problems } from './problems.js';
import { type CoreInput, resolveCore } from './resolve.js';
import type { Config, Env } from './types.js';

export interface ParseConfigOptions {
  env?: Env;
  /** Shown before each problem (the file name). */
  source?: string;
  /**
   * The parts read besides the core's (default: every registered one, e.g. the YouTube
   * application's once `quota-guard/youtube` is imported). `[]` reads the core's keys only.
   */
  parts?: readonly AnyResolver[];
}

/**
 * The core's settings and each part's from what the schema returned, problems collected in
 * `problems`; undefined only when the core could not be resolved at all.
 */
export function resolveAll(
  data: Record<string, unknown>,
  parts: readonly AnyResolver[],
  problems: Problems,
  env: Env,
  source: string | undefined,
): Config {
  const core = resolveCore(data as unknown as CoreInput, env, problems, source);
  const settings = parts.map((part) => {
    const own = Object.fromEntries(part.keys.map((k) => [k, data[k]]));
    return { name: part.name, settings: part.resolve(own, { env, source, problems, core }) };
  });
  return withLookups(core, settings, env, source);
}

/** Resolve what the schema returned. Throws ConfigError (exit 78) with one line per problem. */
export function resolveValidated(
  data: Record<string, unknown>,
  options: ParseConfigOptions & { parts: readonly AnyResolver[] },
): Config {
  const env = options.env ?? process.env;
  const problems = new Problems();
  const config = resolveAll(data, options.parts, problems, env, options.source);
  throwProblems(problems, options.source);
  return config;
}

/** A ConfigError with every problem, each line prefixed with the file, when there is any. */
export function throwProblems(problems: Problems, source: string | undefined): void {
  if (problems.list.length === 0) return;
  const prefix = source ? `${source}: ` : '';
  throw new ConfigError(
    problems.list.map((p) => prefix + p.text),
    problems.code(),
  );
}

/**
 * Set by scripts/bundle-cli.mjs to the JSON of what the CLI's schema returns for an empty config
 * when the CLI is bundled; not defined when the sources run as they are.
 */
declare const QUOTA_GUARD_VALIDATED_DEFAULTS: string | undefined;

/** What the schema returns for an empty config, when the build embedded it; else undefined. */
export function embeddedDefaults(): Record<string, unknown> | undefined {
  return typeof QUOTA_GUARD_VALIDATED_DEFAULTS === 'undefined'
    ? undefined
    : (JSON.parse(QUOTA_GUARD_VALIDATED_DEFAULTS) as Record<string, unknown>);
}
