/**
 * The one reader of ledger store URLs, used by the config (to report a bad URL with its path) and by
 * `openLedger` (to pick and open the store). It imports no store client, so reading a config never
 * loads ioredis or better-sqlite3.
 *
 *   sqlite:data/quota.db        embedded file, `sqlite::memory:` for a private one
 *   redis://host:port/db        one Redis (rediss:// for TLS)
 *   redis-cluster://h1:p1,h2:p2 Redis Cluster (rediss-cluster:// for TLS)
 *   redis-sentinel://h1:26379,h2:26379/mymaster[/db]   the primary Sentinel names (rediss-sentinel:// for TLS)
 */
import { QuotaGuardError } from '../errors.js';

export type StoreKind = 'sqlite' | 'redis' | 'redis-cluster';

export interface ClusterUrl {
  nodes: Array<{ host: string; port: number }>;
  username?: string;
  password?: string;
  tls: boolean;
}

/** `redis-sentinel://[user:pass@]h1:p1,h2:p2/name[/db]`: the Sentinels and the primary's name. */
export interface SentinelUrl extends ClusterUrl {
  /** The name Sentinel monitors the primary under (`sentinel monitor <name> …`). */
  name: string;
  db: number;
}

export type StoreUrl =
  | { kind: 'sqlite'; path: string }
  | { kind: 'redis'; url: string; sentinel?: SentinelUrl }
  | ({ kind: 'redis-cluster'; url: string } & ClusterUrl);

/** The store URL with any password replaced, safe to put in messages and logs. */
export function redactStoreUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, (_m, auth: string) => {
    const colon = auth.indexOf(':');
    return colon < 0 ? '//***@' : `//${auth.slice(0, colon)}:***@`;
  });
}

/** The user, password and host:port list of a multi-host URL. */
function parseHosts(tls: boolean, auth: string | undefined, hosts: string): ClusterUrl | undefined {
  const out: ClusterUrl = { nodes: [], tls };
  if (auth) {
    const colon = auth.indexOf(':');
    const user = decodeURIComponent(colon < 0 ? '' : auth.slice(0, colon));
    const pass = decodeURIComponent(colon < 0 ? auth : auth.slice(colon + 1));
    if (user) out.username = user;
    if (pass) out.password = pass;
  }
  for (const hp of hosts.split(',')) {
    const hm = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(hp.trim());
    if (!hm) return undefined;
    out.nodes.push({ host: hm[1]!, port: Number(hm[2]) });
  }
  return out.nodes.length > 0 ? out : undefined;
}

/** `redis-cluster://[user:pass@]h1:p1,h2:p2` (or `rediss-cluster://` for TLS). */
export function parseClusterUrl(url: string): ClusterUrl | undefined {
  const m = /^(rediss?)-cluster:\/\/(?:([^@/]*)@)?([^/?#]+)\/?$/.exec(url);
  return m ? parseHosts(m[1] === 'rediss', m[2], m[3]!) : undefined;
}

/**
 * `redis-sentinel://[user:pass@]h1:p1,h2:p2/name[/db]` (or `rediss-sentinel://`: TLS to the Redis
 * servers). The user and password are the Redis servers'; the Sentinels are asked without them.
 */
export function parseSentinelUrl(url: string): SentinelUrl | undefined {
  const m = /^(rediss?)-sentinel:\/\/(?:([^@/]*)@)?([^/?#]+)\/([^/?#]+)(?:\/(\d{1,2}))?\/?$/.exec(url);
  if (!m) return undefined;
  const hosts = parseHosts(m[1] === 'rediss', m[2], m[3]!);
  return hosts ? { ...hosts, name: decodeURIComponent(m[4]!), db: Number(m[5] ?? 0) } : undefined;
}

/** Why `url` is not a store URL, or undefined when it is one. */
function problemOf(u: string): string | undefined {
  if (u === '') return 'empty';
  if (u.startsWith('sqlite:')) return sqlitePath(u) === '' ? 'no file path' : undefined;
  if (/^rediss?:\/\//.test(u)) {
    try {
      new URL(u);
      return undefined;
    } catch {
      return 'not a valid URL';
    }
  }
  if (/^rediss?-cluster:\/\//.test(u)) {
    return parseClusterUrl(u) ? undefined : 'expected host:port[,host:port…] after the scheme';
  }
  if (/^rediss?-sentinel:\/\//.test(u)) {
    return parseSentinelUrl(u)
      ? undefined
      : 'expected host:port[,host:port…]/<primary name>[/db] after the scheme';
  }
  return 'unknown scheme';
}

function sqlitePath(u: string): string {
  const path = u.slice('sqlite:'.length);
  return path.startsWith('//') ? path.slice(2) : path;
}

/**
 * What a store URL names. Throws QuotaGuardError QG_STORE_URL_INVALID (exit 78), with the password
 * redacted, when it names nothing.
 */
export function parseStoreUrl(url: string): StoreUrl {
  const u = typeof url === 'string' ? url.trim() : '';
  const why = problemOf(u);
  if (why !== undefined) {
    throw new QuotaGuardError(
      'QG_STORE_URL_INVALID',
      `store URL '${redactStoreUrl(String(url))}': ${why} (expected sqlite:<path>, sqlite::memory:, ` +
        'redis://host:port, rediss://host:port, redis-cluster://host:port,host:port or ' +
        'redis-sentinel://host:port,host:port/name)',
      { field: 'store' },
    );
  }
  if (u.startsWith('sqlite:')) return { kind: 'sqlite', path: sqlitePath(u) };
  if (/^rediss?:\/\//.test(u)) return { kind: 'redis', url: u };
  const sentinel = parseSentinelUrl(u);
  if (sentinel) return { kind: 'redis', url: u, sentinel };
  return { kind: 'redis-cluster', url: u, ...parseClusterUrl(u)! };
}
