/**
 * The format of a store kept on Redis: the ledger and the run history under one key prefix. The
 * string key `<prefix>qg:format` holds the version of their key layout (docs/lua.md, "Data model").
 *
 * - Version 1 is the layout of 0.2.0 and of this release: 0.2.0 wrote no format key, so a store
 *   without one is of version 1. The key never expires (it is the one key that does not).
 * - A command that writes sets the key when it is missing; a command that only reads never does.
 * - A store of a newer version is refused (QG_STORE_CORRUPT, as an SQLite file of a newer schema), by
 *   readers and writers alike. The version changes only with a layout the previous release could not
 *   use, which `quota-guard migrate` writes and says so; 0.2.0 reads no format key, so such a
 *   change is for the release after this one, whose previous release checks it.
 */
import { QuotaGuardError, StoreUnavailableError } from '../errors.js';
import type { RedisConnection } from './connection.js';

/** The key layout this release reads and writes. */
export const REDIS_FORMAT = 1;

/** The format key, under the store's prefix. */
export const FORMAT_KEY = 'qg:format';

/** The store's format version: the format key's, or 1 when there is none (`marked` false). */
export interface RedisFormat {
  version: number;
  marked: boolean;
}

/** Where a store is, for messages: its address and prefix. */
function storeName(conn: RedisConnection, prefix: string): string {
  return `Redis store at ${conn.where}${prefix ? ` (key prefix '${prefix}')` : ''}`;
}

/** Read the format key: its version, or 1 when it is missing; refuses what it cannot read. */
export async function readRedisFormat(conn: RedisConnection, prefix: string): Promise<RedisFormat> {
  const raw = await conn.call('reading the format', () => conn.client.get(prefix + FORMAT_KEY));
  if (raw === null) return { version: REDIS_FORMAT, marked: false };
  const version = /^[1-9]\d{0,8}$/.test(raw) ? Number(raw) : Number.NaN;
  if (Number.isNaN(version)) {
    throw new QuotaGuardError(
      'QG_STORE_CORRUPT',
      `${storeName(conn, prefix)}: its format key '${prefix}${FORMAT_KEY}' holds data this quota-guard cannot read`,
      { details: { key: prefix + FORMAT_KEY } },
    );
  }
  if (version > REDIS_FORMAT) {
    throw new QuotaGuardError(
      'QG_STORE_CORRUPT',
      `${storeName(conn, prefix)} is of format ${version}, newer than this quota-guard understands (${REDIS_FORMAT}); upgrade quota-guard`,
      { details: { key: prefix + FORMAT_KEY, version } },
    );
  }
  return { version, marked: true };
}

/** Set the format key where it is missing (another writer may set it at the same moment: NX). */
export async function markRedisFormat(conn: RedisConnection, prefix: string): Promise<void> {
  await conn.call('writing the format', () =>
    conn.client.set(prefix + FORMAT_KEY, String(REDIS_FORMAT), 'NX'),
  );
}

/**
 * At open: refuse a store of a newer format and, for a command that writes, mark an unmarked one.
 * A store that cannot be reached yet (`allowUnreachable`) is checked by nobody: its first command
 * fails anyway, and a command that writes marks it the next time it opens.
 */
export async function checkRedisFormat(
  conn: RedisConnection,
  prefix: string,
  o: { writes: boolean; allowUnreachable?: boolean },
): Promise<void> {
  try {
    const format = await readRedisFormat(conn, prefix);
    if (o.writes && !format.marked) await markRedisFormat(conn, prefix);
  } catch (e) {
    if (o.allowUnreachable && e instanceof StoreUnavailableError) return;
    throw e;
  }
}
