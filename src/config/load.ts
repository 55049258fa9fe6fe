/**
 * Reading the config: `loadConfig({ file, env })` reads YAML or JSON (the file from `--config`, else
 * `QUOTA_GUARD_CONFIG`, else the embedded defaults), validates it with the zod schema of the core's
 * keys and every part's (parts.ts), then resolves it (resolve.ts and each part's resolver) and
 * checks every cross-reference. All problems are reported at once, one line each with its path, what
 * was expected and the nearest known name (problems.ts, lenient.ts), as a ConfigError (exit 78).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { CONFIG_ENV, MAX_CONFIG_BYTES } from './defaults.js';
import { parseLeniently } from './lenient.js';
import { type ConfigPart, registeredParts } from './parts.js';
import { type Path, Problems } from './problems.js';
import { schemaOf } from './schema.js';
import type { Config, Env } from './types.js';
import { type ParseConfigOptions, resolveAll, throwProblems } from './validated.js';
import { parseYaml } from './yaml.js';

export type { Env };

/** How a config is parsed: its environment, its file's name and the parts read besides the core's. */
export interface ParseOptions extends Omit<ParseConfigOptions, 'parts'> {
  /** The parts read besides the core's (default: every registered one). `[]`: the core's keys only. */
  parts?: readonly ConfigPart[];
}

export type { ParseOptions as ParseConfigOptions };

export interface LoadConfigOptions extends Omit<ParseOptions, 'source'> {
  /** The config file (from `--config`). Falls back to `env.QUOTA_GUARD_CONFIG`, then the embedded defaults. */
  file?: string;
  /** Where `QUOTA_GUARD_CONFIG`, `REDIS_URL` and API keys are read from (default `process.env`). */
  env?: Env;
}

/** Load, validate and resolve the configuration. Throws ConfigError (exit 78) with one line per problem. */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const parts = options.parts !== undefined ? { parts: options.parts } : {};
  const file = options.file || env[CONFIG_ENV] || undefined;
  if (!file) return parseConfig({}, { env, ...parts });
  const text = readConfigFile(file);
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    const err = e as Error & { linePos?: Array<{ line: number; col: number }> };
    const pos = err.linePos?.[0];
    const where = pos ? `${file}:${pos.line}:${pos.col}` : file;
    const first = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigError([`${where}: not valid YAML or JSON: ${first}`]);
  }
  return parseConfig(raw ?? {}, { env, source: file, ...parts });
}

/**
 * The text of a config file, read only if it is a regular file of at most MAX_CONFIG_BYTES: a
 * device (`/dev/zero`), a FIFO or a directory is refused before it is opened, and a huge file before
 * it is read (a YAML parser takes seconds and gigabytes on megabytes of input).
 */
function readConfigFile(file: string): string {
  const fail = (why: string): never => {
    throw new ConfigError([`${file}: ${why}`]);
  };
  const tooBig = (size: number) =>
    fail(`config file is ${size.toLocaleString('en-US')} bytes; a config file may have at most 1 MiB`);
  let fd: number | undefined;
  try {
    const st = statSync(file);
    if (!st.isFile())
      fail(`not a regular file (${st.isDirectory() ? 'a directory' : 'a device, FIFO or socket'})`);
    if (st.size > MAX_CONFIG_BYTES) tooBig(st.size);
    fd = openSync(file, 'r');
    // Read one byte more than allowed, so a file that grew since the stat is caught too.
    const buf = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) r = readSync(fd, buf, n, buf.length - n, null);
    if (n > MAX_CONFIG_BYTES) tooBig(n);
    return buf.toString('utf8', 0, n);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    return fail(
      code === 'ENOENT' ? 'config file not found' : `cannot read the config file (${code ?? 'error'})`,
    );
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Validate and resolve an already-parsed config object (what a config file holds): the core's keys
 * and every part's. Every mistake is reported in one ConfigError: the schema's, and what resolving
 * finds in the rest of the file once the parts the schema refused are taken out (lenient.ts).
 */
export function parseConfig(raw: unknown, options: ParseOptions = {}): Config {
  const env = options.env ?? process.env;
  const parts = options.parts ?? registeredParts();
  const problems = new Problems();
  // A config is parsed once per process: without the JIT, zod checks its objects directly instead
  // of first compiling a parser for each one (new Function), which cost most of the first parse.
  const { data, dropped, removed } = parseLeniently(schemaOf(parts), raw, problems);
  if (data === undefined) {
    throwProblems(problems, options.source);
    throw new ConfigError([`${options.source ? `${options.source}: ` : ''}must be a mapping of settings`]);
  }
  markBroken(problems, dropped, removed);
  const config = resolveAll(data, parts, problems, env, options.source);
  throwProblems(problems, options.source);
  return config;
}

/**
 * The names whose definitions the schema refused: a credential or budget left out of its list, a
 * profile any part of which was taken out, and every name of a list taken out whole. A reference to
 * one is not reported as unknown.
 */
function markBroken(
  problems: Problems,
  dropped: ReadonlyArray<{ list: string; raw: unknown }>,
  removed: readonly Path[],
): void {
  const kinds = {
    credentials: 'credential',
    budgets: 'budget',
    profiles: 'profile',
    regions: 'region',
  } as const;
  for (const d of dropped) {
    const kind = Object.hasOwn(kinds, d.list) ? kinds[d.list as keyof typeof kinds] : undefined;
    if (kind === undefined) continue;
    const raw = d.raw as { id?: unknown } | string | undefined;
    const name = typeof raw === 'string' ? raw : raw?.id;
    problems.markBroken(kind, typeof name === 'string' ? name : '*');
  }
  for (const path of removed) {
    const list = path[0] as string;
    if (!Object.hasOwn(kinds, list)) continue;
    const kind = kinds[list as keyof typeof kinds];
    if (path.length === 1) problems.markBroken(kind, '*');
    else if (list === 'profiles' && typeof path[1] === 'string') problems.markBroken('profile', path[1]);
  }
}
