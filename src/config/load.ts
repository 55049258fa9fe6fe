/**
 * Reading the config: `loadConfig({ file, env })` reads YAML or JSON (the file from `--config`, else
 * `QUOTA_GUARD_CONFIG`, else the embedded defaults), validates it with the zod schema, then resolves
 * it (resolve.ts) and checks every cross-reference. All problems are reported at once, one line each
 * with its path (problems.ts), as a ConfigError (exit code 78).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { CONFIG_ENV, MAX_CONFIG_BYTES } from './defaults.js';
import { formatIssue, formatPath, Problems } from './problems.js';
import { resolve } from './resolve.js';
import { configSchema } from './schema.js';
import type { Config, Env } from './types.js';
import { type ParseConfigOptions, resolveValidated } from './validated.js';
import { parseYaml } from './yaml.js';

export type { Env, ParseConfigOptions };

export interface LoadConfigOptions {
  /** The config file (from `--config`). Falls back to `env.QUOTA_GUARD_CONFIG`, then the embedded defaults. */
  file?: string;
  /** Where `QUOTA_GUARD_CONFIG`, `REDIS_URL` and API keys are read from (default `process.env`). */
  env?: Env;
}

/** Load, validate and resolve the configuration. Throws ConfigError (exit 78) with one line per problem. */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const file = options.file || env[CONFIG_ENV] || undefined;
  if (!file) return parseConfig({}, { env });
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
  return parseConfig(raw ?? {}, { env, source: file });
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

/** Validate and resolve an already-parsed config object (what a config file holds). */
export function parseConfig(raw: unknown, options: ParseConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const prefix = options.source ? `${options.source}: ` : '';
  // A config is parsed once per process: without the JIT, zod checks its objects directly instead
  // of first compiling a parser for each one (new Function), which cost most of the first parse.
  const parsed = configSchema.safeParse(raw, { jitless: true });
  if (!parsed.success) {
    // Every problem at once: the schema's, then what resolving finds in the rest (an unknown key
    // fixed should not reveal five more).
    const lines = parsed.error.issues.flatMap((i) => formatIssue(i));
    lines.push(...problemsBeyond(raw, parsed.error.issues, env));
    throw new ConfigError(
      lines.map((p) => prefix + p),
      'QG_CONFIG_INVALID',
    );
  }
  return resolveValidated(parsed.data, { ...options, env });
}

/**
 * What resolving finds in a config the schema refused, once the parts it refused are taken out (an
 * unknown key dropped, a bad value left to its default), so they are reported with the schema's in
 * one report. Nothing under a part taken out is reported (its default is not what was written).
 * Empty when taking them out is not enough for the schema (or would renumber a list).
 */
function problemsBeyond(raw: unknown, issues: readonly z.core.$ZodIssue[], env: Env): string[] {
  if (typeof raw !== 'object' || raw === null) return [];
  const copy = structuredClone(raw) as Record<string, unknown>;
  const removed: string[] = [];
  for (const issue of issues) {
    const paths =
      issue.code === 'unrecognized_keys' ? issue.keys.map((k) => [...issue.path, k]) : [issue.path];
    for (const path of paths) {
      const last = path.at(-1);
      if (last === undefined || typeof last === 'number') return [];
      let at: unknown = copy;
      for (const seg of path.slice(0, -1)) at = (at as Record<PropertyKey, unknown> | undefined)?.[seg];
      if (typeof at === 'object' && at !== null) delete (at as Record<PropertyKey, unknown>)[last];
      removed.push(formatPath(path));
    }
  }
  const again = configSchema.safeParse(copy, { jitless: true });
  if (!again.success) return [];
  const problems = new Problems();
  try {
    resolve(again.data, env, problems, undefined);
  } catch {
    return [];
  }
  const under = (text: string) =>
    removed.some(
      (r) => text === r || text.startsWith(`${r}:`) || text.startsWith(`${r}.`) || text.startsWith(`${r}[`),
    );
  return problems.list.map((p) => p.text).filter((t) => !under(t));
}
