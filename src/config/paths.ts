/**
 * Where the SQLite files are. Every path a config resolves to is absolute, so the same command run
 * from two directories reads the same ledger and cache:
 *
 * - No path configured: the data directory — `$QUOTA_GUARD_DATA`, else systemd's
 *   `$STATE_DIRECTORY` (a unit with `StateDirectory=quota-guard`: /var/lib/quota-guard), else
 *   `$XDG_DATA_HOME/quota-guard`, else `~/.local/share/quota-guard`.
 * - A relative path written in a config file: relative to that file's directory.
 * - A relative `sqlite:` path in `REDIS_URL`: relative to the working directory (a variable has no
 *   directory of its own).
 *
 * docs/config.md ("Where the data is") says the same for operators.
 */
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';

const DATA_DIR_ENV = 'QUOTA_GUARD_DATA';
/** The files the data directory holds when no path is configured. */
export const DEFAULT_LEDGER_FILE = 'quota.db';
export const DEFAULT_CACHE_FILE = 'cache.db';

type Env = Record<string, string | undefined>;

export interface DataDir {
  path: string;
  /** What chose it, for `status`. */
  from: 'QUOTA_GUARD_DATA' | 'STATE_DIRECTORY' | 'XDG_DATA_HOME' | 'home';
}

/** The data directory (see the comment at the top). */
export function dataDir(env: Env): DataDir {
  const own = env[DATA_DIR_ENV];
  if (own) return { path: resolve(own), from: 'QUOTA_GUARD_DATA' };
  // systemd sets a colon-separated list when a unit names several state directories.
  const state = env['STATE_DIRECTORY']?.split(':')[0];
  if (state) return { path: resolve(state), from: 'STATE_DIRECTORY' };
  const xdg = env['XDG_DATA_HOME'];
  if (xdg && isAbsolute(xdg)) return { path: join(xdg, 'quota-guard'), from: 'XDG_DATA_HOME' };
  return { path: join(env['HOME'] || homedir(), '.local', 'share', 'quota-guard'), from: 'home' };
}

/** A configured file path made absolute against `base`; `:memory:` stays as it is. */
export function absolutePath(path: string, base: string): string {
  return path === ':memory:' ? path : resolve(base, path);
}

/** The directory relative paths in a config file are taken from (the working directory without a file). */
export function configDir(source: string | undefined): string {
  return source === undefined ? process.cwd() : dirname(resolve(source));
}
