/**
 * The Redis ledger (one server, TLS, Sentinel or a Cluster). All decisions happen inside the Lua
 * scripts (see scripts.ts and lua/), on the server's clock; the connection and its failure policy
 * (timeouts, no offline queue, reconnects, close) are src/redis/'s. This file adds what is the
 * ledger's: a spend whose answer never came is marked unsettled, writes of one tick share a socket
 * write, and `store.waitReplicas` waits for replicas.
 */
import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis } from 'ioredis';
import { QuotaGuardError, StoreUnavailableError } from '../errors.js';
import {
  checkRedisFormat,
  mapRedisError,
  mayStillRun,
  openRedisConnection,
  type RedisConnection,
} from '../redis/index.js';
import type { BackendRecord, BackendSpend, BackendVoid, LedgerBackend, MinuteGrid } from './backend.js';
import { CrossSlotError } from './errors.js';
import { type LedgerScripts, registerScripts } from './scripts.js';
import type {
  Decision,
  LateSummary,
  LedgerKind,
  MinuteUnits,
  OpenLedgerOptions,
  RecordResult,
  Settlement,
  Snapshot,
  UnsettledSpend,
  VoidResult,
} from './types.js';

/** At most this many spends share one socket write (see RedisBackend.#holdWrites). */
const MAX_HELD_WRITES = 8;

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
  const conn = await openRedisConnection(kind, url, o);
  try {
    // A command that only reads (`create: false` without `writes`) never writes the format key.
    await checkRedisFormat(conn, o.keyPrefix ?? '', {
      writes: o.create !== false || o.writes === true,
      ...(o.allowUnreachable ? { allowUnreachable: true } : {}),
    });
  } catch (e) {
    await conn.close();
    throw e;
  }
  const wait = waitReplicas > 0 ? { replicas: waitReplicas, timeoutMs: o.waitTimeoutMs ?? 100 } : undefined;
  return new RedisBackend(kind, conn, registerScripts(conn.client, o.keyPrefix ?? ''), wait);
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
  readonly #conn: RedisConnection;
  readonly #client: Redis | Cluster;
  readonly #scripts: LedgerScripts;
  /** The stream held by #holdWrites, and how many spends it holds. */
  #corked: Redis['stream'] | undefined;
  #held = 0;
  readonly #wait: Durability | undefined;

  constructor(kind: LedgerKind, conn: RedisConnection, scripts: LedgerScripts, wait?: Durability) {
    this.kind = kind;
    this.#conn = conn;
    this.#client = conn.client;
    this.#scripts = scripts;
    this.#wait = wait;
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
    const decision = this.#scripts.spend(req, (e, r) => spendFailed(e, r, this.#conn.where));
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
      spendFailed(e, req, this.#conn.where);
    }
    if (acked >= replicas) return d;
    const err = this.#notHeld('spend', acked);
    err.unsettled = unsettledOf(req);
    throw err;
  }

  #notHeld(what: string, acked: number): StoreUnavailableError {
    const { replicas, timeoutMs } = this.#wait!;
    return new StoreUnavailableError(
      `Redis ledger at ${this.#conn.where}: ${what} held by ${acked} of ${replicas} replica${replicas === 1 ? '' : 's'} after ${timeoutMs} ms (store.waitReplicas)`,
    );
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

  async refund(keys: string[], id: string): Promise<boolean> {
    this.#checkSlots(keys);
    return (await this.#conn.call('refund', () => this.#scripts.refund(keys, id))) > 0;
  }

  /**
   * Sent on the connection the spend went out on, so Redis answers it only after it has run the
   * spend (commands on one connection run in order); a reconnect in between means the old
   * connection's commands ran, or never will, before the new one was accepted.
   */
  settle(keys: string[], id: string, refund: boolean): Promise<Settlement> {
    this.#checkSlots(keys);
    return this.#conn.call('settle', async () => {
      if (refund) return (await this.#scripts.refund(keys, id)) > 0 ? 'refunded' : 'absent';
      return (await this.#scripts.landed(keys[0]!, id)) ? 'recorded' : 'absent';
    });
  }

  peek(key: string, windowMs: number, totalsOnly?: boolean): Promise<Snapshot> {
    return this.#conn.call('peek', () =>
      totalsOnly ? this.#scripts.used(key, windowMs) : this.#scripts.peek(key, windowMs),
    );
  }

  block(key: string, untilEpochMs: number, reason: string): Promise<void> {
    return this.#conn.call('block', () => this.#scripts.block(key, untilEpochMs, reason));
  }

  unblock(key: string): Promise<void> {
    return this.#conn.call('unblock', () => this.#scripts.unblock(key));
  }

  freesUpIn(key: string, windowMs: number, limit: number, amounts: number[]): Promise<number[]> {
    return this.#conn.call('freesUpIn', () => this.#scripts.freesUpIn(key, windowMs, limit, amounts));
  }

  recallEntry(key: string): Promise<string | undefined> {
    return this.#conn.call('recallEntry', () => this.#scripts.recallEntry(key));
  }

  async record(req: BackendRecord): Promise<RecordResult> {
    this.#checkSlots(req.budgets.map((b) => b.key));
    const r = await this.#conn.call('record', () => this.#scripts.record(req));
    return r.outcome === 'recorded' ? this.#replicated('record', r) : r;
  }

  async void(req: BackendVoid): Promise<VoidResult> {
    this.#checkSlots(req.budgets.map((b) => b.key));
    const r = await this.#conn.call('void', () => this.#scripts.void(req));
    return r.outcome === 'none' ? r : this.#replicated('void', r);
  }

  /**
   * With `store.waitReplicas`, a record or a void counts only once enough replicas hold it (as a
   * spend, #durable): otherwise it fails as the store being unavailable, and its caller (a journal)
   * sends it again later, which changes nothing if it did hold.
   */
  async #replicated<T>(what: string, result: T): Promise<T> {
    if (!this.#wait) return result;
    const { replicas, timeoutMs } = this.#wait;
    const acked = await this.#conn.call(what, () => (this.#client as Redis).wait(replicas, timeoutMs));
    if (acked >= replicas) return result;
    throw this.#notHeld(what, acked);
  }

  late(key: string, windowMs: number): Promise<LateSummary> {
    return this.#conn.call('late', () => this.#scripts.late(key, windowMs));
  }

  perMinute(
    key: string,
    windowMs: number,
    fromMs: number,
    toMs: number,
    grid: MinuteGrid,
  ): Promise<MinuteUnits[]> {
    return this.#conn.call('perMinute', () => this.#scripts.perMinute(key, windowMs, fromMs, toMs, grid));
  }

  async ping(): Promise<void> {
    await this.#conn.call('ping', async () => {
      if (this.#client instanceof Cluster) {
        await Promise.all(this.#client.nodes('master').map((n) => n.ping()));
      } else {
        await this.#client.ping();
      }
    });
  }

  close(): Promise<void> {
    return this.#conn.close();
  }
}
