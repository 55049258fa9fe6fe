/**
 * A Redis connection with the stores' failure policy, for every record kept on Redis (the ledger and
 * the run history alike):
 * - no offline queue and a command timeout (default 1000 ms): a dead or hung Redis fails a call
 *   fast with StoreUnavailableError instead of queueing it, so the guard can fail open or closed;
 * - reconnects forever with a bounded delay, so the same store works again once Redis is back;
 * - never resends a command that was in flight when the connection dropped (a spend may have run);
 * - one server, TLS (`rediss://`), Sentinel (`redis-sentinel://`) or a Cluster (`redis-cluster://`);
 * - closing never waits on a server that does not answer;
 * - a connection never keeps the process alive by itself: its sockets (and its reconnect timer) are
 *   held only while a command is in flight (`releaseWhenIdle`), so a job that forgets `close()`
 *   still exits when its work is done, as it would on SQLite.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { StoreKind } from '../config/store-url.js';
import { parseClusterUrl, parseSentinelUrl } from '../config/store-url.js';
import { QuotaGuardError, StoreUnavailableError } from '../errors.js';
import { causeOf, describeRedisFailure, mapRedisError } from './errors.js';

/** The kinds of store URL a Redis connection serves. */
export type RedisKind = Extract<StoreKind, 'redis' | 'redis-cluster'>;

/** How a store connects (the store's config: `store.commandTimeoutMs`, …). */
export interface RedisConnectOptions {
  /** Command timeout in ms (default 1000). No offline queue: a dead Redis fails fast. */
  commandTimeoutMs?: number;
  /** Connect timeout in ms (default 1000): connect, TLS and the server's first answer together. */
  connectTimeoutMs?: number;
  /**
   * When the server cannot be reached at open, resolve anyway and keep reconnecting in the
   * background (calls fail with StoreUnavailableError until it is back). Default false: connecting
   * rejects with StoreUnavailableError.
   */
  allowUnreachable?: boolean;
}

/** Longest pause between reconnect attempts (ms). */
const MAX_RECONNECT_DELAY_MS = 500;

/**
 * How long a closing socket may wait for the server's side of the close before it is destroyed
 * (ioredis' `disconnectTimeout`, 2 s by default). A stopped or dead server never answers, and the
 * pending close timer alone would keep a finished CLI process alive that long.
 */
const DISCONNECT_TIMEOUT_MS = 100;

/** Longest wait for QUIT's reply at close (a live server answers in well under a millisecond). */
const QUIT_TIMEOUT_MS = 300;

function baseOptions(o: RedisConnectOptions): RedisOptions {
  return {
    commandTimeout: o.commandTimeoutMs ?? 1000,
    connectTimeout: o.connectTimeoutMs ?? 1000,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (times) => Math.min(50 * times, MAX_RECONNECT_DELAY_MS),
    disconnectTimeout: DISCONNECT_TIMEOUT_MS,
    lazyConnect: true,
  };
}

/** A Redis in Sentinel mode that knows when it is being closed (see its sentinelRetryStrategy). */
class SentinelClient extends Redis {
  closing = false;
  override disconnect(reconnect = false): void {
    if (!reconnect) this.closing = true;
    super.disconnect(reconnect);
  }
  override quit(): Promise<'OK'> {
    this.closing = true;
    return super.quit();
  }
}

/**
 * ioredis asks each Sentinel through a short-lived client of its own, made without our options, so
 * closing it leaves ioredis' default 2 s close timer behind: a command on unreachable Sentinels
 * would linger that long after its answer. Give those clients our disconnect timeout too. This
 * reaches into ioredis' connector (5.x); if that changes, nothing breaks but the linger.
 */
function shortenSentinelCloses(client: Redis): void {
  const connector = (client as unknown as { connector?: Record<string, unknown> }).connector;
  const original = connector?.['connectToSentinel'];
  if (!connector || typeof original !== 'function') return;
  connector['connectToSentinel'] = function (this: unknown, endpoint: unknown, options?: object) {
    return original.call(this, endpoint, { disconnectTimeout: DISCONNECT_TIMEOUT_MS, ...options });
  };
}

/** Our own rejection of a call that took too long (its message is ours to show). */
class TimedOut extends Error {}

/** `p`, or a rejection with `message` after `ms`; the timer never outlives the race. */
async function within<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_r, reject) => {
        timer = setTimeout(() => reject(new TimedOut(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Connect, TLS handshake and ready check together within the connect timeout. ioredis' own
 * `connectTimeout` covers the TCP connect only: a stopped server (its kernel still accepts
 * connections) would leave the ready check waiting.
 */
async function connect(client: Redis | Cluster, o: RedisConnectOptions): Promise<void> {
  const limitMs = o.connectTimeoutMs ?? 1000;
  await within(client.connect(), limitMs, `no answer within ${limitMs} ms`);
}

/** `host:port` of a Redis URL (of every node of a Cluster URL), without user or password. */
function redisAddress(url: string): string {
  const sentinel = parseSentinelUrl(url);
  if (sentinel) {
    return `${sentinel.nodes.map((n) => `${n.host}:${n.port}`).join(',')} (Sentinels of '${sentinel.name}')`;
  }
  const cluster = parseClusterUrl(url);
  if (cluster) return cluster.nodes.map((n) => `${n.host}:${n.port}`).join(',');
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '6379'}`;
  } catch {
    return 'an invalid URL';
  }
}

/**
 * A connected client with the stores' failure policy (short timeouts, no offline queue, reconnects
 * forever).
 */
async function connectRedis(kind: RedisKind, url: string, o: RedisConnectOptions): Promise<Redis | Cluster> {
  let client: Redis | Cluster;
  const sentinel = kind === 'redis' ? parseSentinelUrl(url) : undefined;
  if (sentinel) {
    // ioredis' Sentinel mode: asks the Sentinels for the primary at every (re)connect and checks
    // that the server it reaches is the primary, so a failover needs no proxy and no restart.
    const c: SentinelClient = new SentinelClient({
      ...baseOptions(o),
      sentinels: sentinel.nodes,
      name: sentinel.name,
      role: 'master',
      db: sentinel.db,
      ...(sentinel.username ? { username: sentinel.username } : {}),
      ...(sentinel.password ? { password: sentinel.password } : {}),
      ...(sentinel.tls ? { tls: {}, enableTLSForSentinelMode: true } : {}),
      sentinelCommandTimeout: o.commandTimeoutMs ?? 1000,
      // Its own loop over unreachable Sentinels keeps going after a disconnect unless told to stop.
      sentinelRetryStrategy: (times) => (c.closing ? null : Math.min(50 * times, MAX_RECONNECT_DELAY_MS)),
    });
    shortenSentinelCloses(c);
    client = c;
  } else if (kind === 'redis') {
    client = new Redis(url, baseOptions(o));
  } else {
    const parsed = parseClusterUrl(url);
    if (!parsed) throw new Error('unreachable: URL checked by parseStoreUrl');
    const nodeOptions: RedisOptions = { ...baseOptions(o) };
    delete nodeOptions.retryStrategy;
    if (parsed.username) nodeOptions.username = parsed.username;
    if (parsed.password) nodeOptions.password = parsed.password;
    if (parsed.tls) nodeOptions.tls = {};
    client = new Cluster(parsed.nodes, {
      enableOfflineQueue: false,
      lazyConnect: true,
      redisOptions: nodeOptions,
      clusterRetryStrategy: (times) => Math.min(50 * times, MAX_RECONNECT_DELAY_MS),
      slotsRefreshTimeout: o.connectTimeoutMs ?? 1000,
      maxRedirections: 4,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
    });
  }
  // Connection errors surface on the calls that hit them; the last one explains a failed open.
  // A socket's own failure (connection refused, unknown host) is kept apart: on a slow machine the
  // client's later "not connected" errors can arrive after it and would hide the reason.
  let lastError: unknown;
  let socketError: unknown;
  client.on('error', (e: unknown) => {
    lastError = e;
    if (typeof (e as { syscall?: unknown } | null)?.syscall === 'string') socketError = e;
  });
  try {
    await connect(client, o);
  } catch (e) {
    const nodeError = (lastError as { lastNodeError?: unknown } | undefined)?.lastNodeError;
    const where = redisAddress(url);
    const auth = mapRedisError(nodeError ?? lastError, 'connect', where);
    if (auth instanceof QuotaGuardError && auth.code === 'QG_CONFIG_INVALID') {
      client.disconnect();
      throw auth;
    }
    if (!o.allowUnreachable) {
      client.disconnect();
      // The socket's own error (connection refused, unknown host) says more than the client's
      // "Connection is closed"; the hint names what the operator can change.
      const why = nodeError ?? socketError ?? lastError ?? e;
      const reason = why instanceof TimedOut ? why.message : describeRedisFailure(why);
      throw new StoreUnavailableError(
        `Redis ledger at ${where}: cannot connect: ${reason}; check that Redis runs there and the store address (the config's \`store\`, else $REDIS_URL)`,
        { cause: causeOf(why) },
      );
    }
  }
  return client;
}

/**
 * Let the process exit while no command is in flight: every command (the ledger's scripts, the
 * history's reads, the ready check) goes through `sendCommand`, which holds the client's sockets
 * (`ref`) until its reply or failure; once none is in flight they are released (`unref`), and so are
 * a socket opened later (a reconnect, a Cluster node) and the reconnect timer while idle. A process
 * whose work is done then exits although a handle was never closed, and nothing in flight is cut
 * short. Chosen over a warning: an open handle cannot tell a forgotten one from one a service keeps
 * on purpose, and a service stays alive by its own timers and servers. The reconnect timer is
 * ioredis' own field (5.x); if that changes, only an idle reconnect loop holds the process again.
 */
function releaseWhenIdle(client: Redis | Cluster): void {
  let inFlight = 0;
  const redises = (): Redis[] => (client instanceof Cluster ? client.nodes() : [client]);
  const hold = (on: boolean) => {
    for (const r of redises()) {
      // A socket still connecting (held until then: 'connect' comes back here) or gone is left
      // alone: Node defers ref()/unref() of one without a handle to a 'connect' listener each.
      const s = r.stream;
      if (!s || s.connecting || s.destroyed) continue;
      if (on) s.ref();
      else s.unref();
    }
    const reconnect = (client as unknown as { reconnectTimeout?: NodeJS.Timeout | null }).reconnectTimeout;
    if (!on) reconnect?.unref();
  };
  const send = client.sendCommand.bind(client) as (...args: unknown[]) => unknown;
  client.sendCommand = ((command: { promise: Promise<unknown> }, ...rest: unknown[]) => {
    if (inFlight++ === 0) hold(true);
    const done = () => {
      if (--inFlight === 0) hold(false);
    };
    command.promise.then(done, done);
    return send(command, ...rest);
  }) as typeof client.sendCommand;
  const idle = () => {
    if (inFlight === 0) hold(false);
  };
  const watch = (r: Redis) => r.on('connect', idle).on('reconnecting', idle);
  if (client instanceof Cluster) {
    client.on('+node', watch).on('reconnecting', idle);
    for (const node of client.nodes()) watch(node);
  } else {
    watch(client);
  }
  idle();
}

/**
 * A connected client, the address its messages name, and the one wrapper every store call on it
 * goes through, so that whatever ioredis throws reaches the caller as a typed error.
 */
export class RedisConnection {
  readonly client: Redis | Cluster;
  /** The server's address, without user or password (`redisAddress`). */
  readonly where: string;

  constructor(client: Redis | Cluster, where: string) {
    this.client = client;
    this.where = where;
    releaseWhenIdle(client);
  }

  /** `fn`, its failure mapped by `mapRedisError` (`what` names the call in the message). */
  async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw mapRedisError(e, what, this.where);
    }
  }

  close(): Promise<void> {
    return closeRedis(this.client);
  }
}

/** `connectRedis`, with the address the store's messages name. */
export async function openRedisConnection(
  kind: RedisKind,
  url: string,
  o: RedisConnectOptions,
): Promise<RedisConnection> {
  return new RedisConnection(await connectRedis(kind, url, o), redisAddress(url));
}

/**
 * QUIT when the connection is up and answers quickly; otherwise (down, stopped, reconnecting) drop
 * the sockets at once. Either way no reconnect timer or socket is left to keep the process alive: a
 * CLI command on a dead Redis ends as soon as its work is done. Every client connectRedis made
 * closes this way.
 */
async function closeRedis(client: Redis | Cluster): Promise<void> {
  if (client.status === 'ready') {
    try {
      await within(client.quit(), QUIT_TIMEOUT_MS, 'QUIT not answered');
      return;
    } catch {
      // Not answered in time: drop the connection below.
    }
  }
  client.disconnect();
}
