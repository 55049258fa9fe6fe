/**
 * The Redis ledger (one server, TLS, or a Cluster). All decisions happen inside the Lua scripts
 * (see scripts.ts and lua/), on the server's clock; this file owns the connection and its failure
 * policy:
 * - no offline queue and a command timeout (default 1000 ms): a dead or hung Redis fails a call
 *   fast with StoreUnavailableError instead of queueing it, so the guard can fail open or closed;
 * - reconnects forever with a bounded delay, so the same ledger works again once Redis is back;
 * - never resends a command that was in flight when the connection dropped (a spend may have run).
 */
import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { parseClusterUrl, parseSentinelUrl } from '../config/store-url.js';
import { QuotaGuardError, StoreUnavailableError } from '../errors.js';
import type { BackendSpend, LedgerBackend } from './backend.js';
import { CrossSlotError } from './errors.js';
import { type LedgerScripts, registerScripts } from './scripts.js';
import type {
  Decision,
  LedgerKind,
  OpenLedgerOptions,
  Settlement,
  Snapshot,
  UnsettledSpend,
} from './types.js';

/** At most this many spends share one socket write (see RedisBackend.#holdWrites). */
const MAX_HELD_WRITES = 8;

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

/** Node's codes for a TLS certificate it does not accept. */
const TLS_UNTRUSTED = /CERT|SELF_SIGNED|UNABLE_TO_(VERIFY|GET_ISSUER)/;

const UNAVAILABLE_REPLIES = /^(CLUSTERDOWN|TRYAGAIN|LOADING|MASTERDOWN|BUSY|READONLY|NOREPLICAS)\b/;

/**
 * Map whatever ioredis threw to the ledger's errors. Never includes a password. `where` is the
 * server's address (see `redisAddress`), so the operator knows which Redis to look at.
 */
export function mapRedisError(e: unknown, what: string, where?: string): unknown {
  if (e instanceof QuotaGuardError) return e;
  const err = e as { name?: string; message?: string; code?: unknown };
  const message = String(err?.message ?? e);
  const ledger = where !== undefined ? `Redis ledger at ${where}` : 'Redis ledger';
  if (typeof err?.code === 'string' && TLS_UNTRUSTED.test(err.code)) {
    // Not an outage: retrying will not make the certificate trusted.
    return new QuotaGuardError(
      'QG_CONFIG_INVALID',
      `${ledger}: ${what}: the server's TLS certificate is not trusted (${message.split('\n')[0]}); ` +
        'give Node the CA that signed it with NODE_EXTRA_CA_CERTS=<file>',
    );
  }
  if (err?.name === 'ReplyError') {
    if (/^(WRONGPASS|NOAUTH|NOPERM)\b/.test(message)) {
      return new QuotaGuardError(
        'QG_CONFIG_INVALID',
        `${ledger}: ${what}: authentication failed (${message.split(' ')[0]}); check the user and password of the store URL`,
      );
    }
    if (UNAVAILABLE_REPLIES.test(message)) {
      return new StoreUnavailableError(`${ledger}: ${what} failed: ${message.split('\n')[0]}`, {
        cause: e,
      });
    }
    if (/^WRONGTYPE\b/.test(message)) {
      return new QuotaGuardError('QG_STORE_CORRUPT', `${ledger}: ${what}: a ledger key holds another type`, {
        cause: e,
      });
    }
    return new QuotaGuardError('QG_INTERNAL', `${ledger}: ${what} failed: ${message.split('\n')[0]}`, {
      cause: e,
    });
  }
  // Connection refused/reset, command timeout, stream not writeable, cluster slots not reachable…
  return new StoreUnavailableError(`${ledger}: ${what} failed: ${message.split('\n')[0]}`, { cause: e });
}

function baseOptions(o: OpenLedgerOptions): RedisOptions {
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

/** `p`, or a rejection with `message` after `ms`; the timer never outlives the race. */
async function within<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_r, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
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
async function connect(client: Redis | Cluster, o: OpenLedgerOptions): Promise<void> {
  const limitMs = o.connectTimeoutMs ?? 1000;
  await within(client.connect(), limitMs, `no answer within ${limitMs} ms`);
}

export async function openRedisBackend(
  kind: Extract<LedgerKind, 'redis' | 'redis-cluster'>,
  url: string,
  o: OpenLedgerOptions,
): Promise<LedgerBackend> {
  const waitReplicas = o.waitReplicas ?? 0;
  if (waitReplicas > 0 && kind === 'redis-cluster') {
    throw new QuotaGuardError(
      'QG_CONFIG_INVALID',
      'store.waitReplicas: not supported on a Redis Cluster (use one Redis or Sentinel)',
      { field: 'store.waitReplicas' },
    );
  }
  const client = await connectRedis(kind, url, o);
  const wait = waitReplicas > 0 ? { replicas: waitReplicas, timeoutMs: o.waitTimeoutMs ?? 100 } : undefined;
  return new RedisBackend(kind, client, registerScripts(client, o.keyPrefix ?? ''), redisAddress(url), wait);
}

/**
 * A connected client with the ledger's failure policy (short timeouts, no offline queue, reconnects
 * forever). Other records kept in the ledger's store (the run history) connect the same way.
 */
/** `host:port` of a Redis URL (of every node of a Cluster URL), without user or password. */
export function redisAddress(url: string): string {
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

export async function connectRedis(
  kind: Extract<LedgerKind, 'redis' | 'redis-cluster'>,
  url: string,
  o: OpenLedgerOptions,
): Promise<Redis | Cluster> {
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
    if (!parsed) throw new Error('unreachable: URL checked by openLedger');
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
  let lastError: unknown;
  client.on('error', (e: unknown) => {
    lastError = e;
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
      const why = (nodeError ?? lastError ?? e) as { message?: unknown };
      throw new StoreUnavailableError(
        `Redis ledger at ${where}: cannot connect (${String(why?.message ?? why).split('\n')[0]}); check that Redis runs there and the store address (the config's \`store\`, else $REDIS_URL)`,
        { cause: e },
      );
    }
  }
  return client;
}

/**
 * Whether a failed command may still run on the server: it was written and its answer never came
 * (a command timeout, the connection lost while it was in flight). A reply error, or a command
 * refused before it was written (no connection: ioredis keeps no offline queue), never runs.
 */
function mayStillRun(e: unknown): boolean {
  const err = e as { name?: string; message?: string } | null;
  if (err?.name === 'ReplyError') return false;
  return !/^(Stream isn't writeable|Cluster isn't ready)/.test(String(err?.message ?? ''));
}

function unsettledOf(req: BackendSpend): UnsettledSpend {
  let windowMs = 0;
  for (const b of req.budgets) windowMs = Math.max(windowMs, b.windowMs);
  return { id: req.id, keys: req.budgets.map((b) => b.key), cost: req.cost, windowMs };
}

function spendFailed(e: unknown, req: BackendSpend, where: string): never {
  const err = mapRedisError(e, 'spend', where);
  if (err instanceof StoreUnavailableError && mayStillRun(e)) err.unsettled = unsettledOf(req);
  throw err;
}

/** How many replicas must hold an allowed spend, and for how long to wait for them (Redis WAIT). */
interface Durability {
  replicas: number;
  timeoutMs: number;
}

class RedisBackend implements LedgerBackend {
  readonly kind: LedgerKind;
  readonly #client: Redis | Cluster;
  readonly #scripts: LedgerScripts;
  /** The stream held by #holdWrites, and how many spends it holds. */
  #corked: Redis['stream'] | undefined;
  #held = 0;

  /** The server's address, for error messages. */
  readonly #where: string;
  readonly #wait: Durability | undefined;

  constructor(
    kind: LedgerKind,
    client: Redis | Cluster,
    scripts: LedgerScripts,
    where: string,
    wait?: Durability,
  ) {
    this.kind = kind;
    this.#client = client;
    this.#scripts = scripts;
    this.#where = where;
    this.#wait = wait;
  }

  async #call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw mapRedisError(e, what, this.#where);
    }
  }

  /** In a Cluster, every key of one call must be in one slot: say so before Redis does. */
  #checkSlots(budgetKeys: readonly string[]): void {
    if (this.kind !== 'redis-cluster' || budgetKeys.length < 2) return;
    const keys = this.#scripts.spendKeys(budgetKeys);
    const slots = keys.map((k) => calculateSlot(k));
    if (slots.some((s) => s !== slots[0])) {
      throw new CrossSlotError(
        budgetKeys,
        budgetKeys.map((_k, i) => slots[2 * i]!),
      );
    }
  }

  spend(req: BackendSpend): Promise<Decision> {
    if (req.budgets.length > 1) this.#checkSlots(req.budgets.map((b) => b.key));
    this.#holdWrites();
    const decision = this.#scripts.spend(req, (e, r) => spendFailed(e, r, this.#where));
    if (this.#corked && ++this.#held >= MAX_HELD_WRITES) this.#flush();
    return this.#wait ? decision.then((d) => this.#durable(req, d)) : decision;
  }

  /**
   * WAIT on the spend's connection: Redis answers once `replicas` replicas have every write this
   * connection made so far (this spend included), or at the timeout with how many did. A spend that
   * is not held by enough replicas could be lost in a failover, so it is not reported as allowed:
   * it fails as the store being unavailable, and carries `unsettled` so that the guard takes it
   * back when the call site fails closed.
   */
  async #durable(req: BackendSpend, d: Decision): Promise<Decision> {
    if (!d.allowed || !this.#wait) return d;
    const { replicas, timeoutMs } = this.#wait;
    let acked: number;
    try {
      acked = await (this.#client as Redis).wait(replicas, timeoutMs);
    } catch (e) {
      spendFailed(e, req, this.#where);
    }
    if (acked >= replicas) return d;
    const err = new StoreUnavailableError(
      `Redis ledger at ${this.#where}: spend held by ${acked} of ${replicas} replica${replicas === 1 ? '' : 's'} after ${timeoutMs} ms (store.waitReplicas)`,
    );
    err.unsettled = unsettledOf(req);
    throw err;
  }

  /**
   * Holds the socket's writes until the end of the current tick (or until MAX_HELD_WRITES spends),
   * so that the spends issued in one tick (typically the callers whose previous spends were
   * answered by the same read) go out in a few writes instead of one system call each. Each command
   * is still its own command (own reply, own timeout, never resent); only the write is shared. The
   * cap keeps Redis busy while the rest of a burst is being prepared. One Redis connection only; a
   * Cluster writes as is.
   */
  #holdWrites(): void {
    if (this.#corked || !(this.#client instanceof Redis)) return;
    const stream = this.#client.stream;
    if (!stream?.writable) return;
    stream.cork();
    this.#corked = stream;
    process.nextTick(this.#flush);
  }

  readonly #flush = (): void => {
    const stream = this.#corked;
    this.#held = 0;
    if (!stream) return;
    this.#corked = undefined;
    stream.uncork();
  };

  async refund(keys: string[], id: string): Promise<void> {
    this.#checkSlots(keys);
    await this.#call('refund', () => this.#scripts.refund(keys, id));
  }

  /**
   * Sent on the connection the spend went out on, so Redis answers it only after it has run the
   * spend (commands on one connection run in order); a reconnect in between means the old
   * connection's commands ran, or never will, before the new one was accepted.
   */
  settle(keys: string[], id: string, refund: boolean): Promise<Settlement> {
    this.#checkSlots(keys);
    return this.#call('settle', async () => {
      if (refund) return (await this.#scripts.refund(keys, id)) > 0 ? 'refunded' : 'absent';
      return (await this.#scripts.landed(keys[0]!, id)) ? 'recorded' : 'absent';
    });
  }

  peek(key: string, windowMs: number): Promise<Snapshot> {
    return this.#call('peek', () => this.#scripts.peek(key, windowMs));
  }

  block(key: string, untilEpochMs: number, reason: string): Promise<void> {
    return this.#call('block', () => this.#scripts.block(key, untilEpochMs, reason));
  }

  unblock(key: string): Promise<void> {
    return this.#call('unblock', () => this.#scripts.unblock(key));
  }

  freesUpIn(key: string, windowMs: number, limit: number, amounts: number[]): Promise<number[]> {
    return this.#call('freesUpIn', () => this.#scripts.freesUpIn(key, windowMs, limit, amounts));
  }

  recallEntry(key: string): Promise<string | undefined> {
    return this.#call('recallEntry', () => this.#scripts.recallEntry(key));
  }

  async ping(): Promise<void> {
    await this.#call('ping', async () => {
      if (this.#client instanceof Cluster) {
        await Promise.all(this.#client.nodes('master').map((n) => n.ping()));
      } else {
        await this.#client.ping();
      }
    });
  }

  close(): Promise<void> {
    return closeRedis(this.#client);
  }
}

/**
 * QUIT when the connection is up and answers quickly; otherwise (down, stopped, reconnecting) drop
 * the sockets at once. Either way no reconnect timer or socket is left to keep the process alive: a
 * CLI command on a dead Redis ends as soon as its work is done. Every client connectRedis made
 * closes this way.
 */
export async function closeRedis(client: Redis | Cluster): Promise<void> {
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
