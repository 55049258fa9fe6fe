/**
 * Every family of Redis error a store meets, each from a real redis-server set up into that state
 * (never a mock): out of memory, a failing RDB save, a replica, a replica without its primary, a
 * long script, a server loading its data, a connection gone. Each is `QG_STORE_UNAVAILABLE` (so the
 * call site's fail-open/closed applies), and the message is ours: no Redis or ioredis text, no
 * script SHA. Each test starts its own server, because each changes the server's config.
 */
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/types.js';
import { createGuard } from '../../src/guard/index.js';
import { openLedger } from '../../src/ledger/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { mapRedisError } from '../../src/redis/index.js';
import { configFile, runChild } from '../e2e/helpers.js';
import { capture, config } from '../guard/helpers.js';
import { type RedisServer, redisServers } from '../harness/redis.js';

const execFileP = promisify(execFile);
const HOUR = 3_600_000;
const B = [{ key: 'family:{k}', limit: 1000, windowMs: HOUR }];

const servers = redisServers();
const server = servers.start;
const closers: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  await servers.stopAll();
});

async function admin(s: RedisServer): Promise<Redis> {
  const c = new Redis(s.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  await c.connect();
  closers.push(() => c.disconnect());
  return c;
}

/** A server past its memory limit (2 MB held, 1 MB allowed, no eviction): it refuses writes with OOM. */
async function fullServer(): Promise<{ s: RedisServer; a: Redis }> {
  const s = await server();
  const a = await admin(s);
  await a.set('fill', 'x'.repeat(2_000_000));
  await a.config('SET', 'maxmemory-policy', 'noeviction');
  await a.config('SET', 'maxmemory', '1mb');
  return { s, a };
}

async function open(url: string): Promise<Ledger> {
  const l = await openLedger(url, { allowUnreachable: true, commandTimeoutMs: 1000, connectTimeoutMs: 1000 });
  closers.push(() => l.close());
  return l;
}

/** `check` true within `ms` (polled every 50 ms), else the test fails saying `what`. */
async function until(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

async function info(c: Redis, section: string): Promise<string> {
  return c.info(section);
}

/** A spend's error, with what a user may read of it checked: ours, naming the family's reply code. */
async function spendError(ledger: Ledger, reply: string): Promise<Error & { code: string }> {
  const e = (await ledger.spend({ budgets: B, cost: 1 }).catch((x: unknown) => x)) as Error & {
    code: string;
    cause?: Error;
    details?: Record<string, unknown>;
  };
  expect(e).toMatchObject({ code: 'QG_STORE_UNAVAILABLE', exitCode: 69, details: { redisReply: reply } });
  expect(e.message).toMatch(/^Redis ledger at 127\.0\.0\.1:\d+: spend failed: /);
  expect(e.message).toContain(`(${reply})`);
  expectOurText(e.message, e.cause?.message ?? '');
  // Redis's own text is kept, for a debug log only, in the cause.
  expect(e.cause?.message).toMatch(new RegExp(`^${reply} `));
  return e;
}

/** No script SHA, no Lua location, none of the raw reply's words after its code. */
function expectOurText(line: string, raw: string): void {
  expect(line).not.toMatch(/[0-9a-f]{40}/);
  expect(line).not.toMatch(/@user_script|script:|enableOfflineQueue|isn't writeable|Connection is closed/);
  const rawWords = raw.replace(/^[A-Z]+ /, '').slice(0, 24);
  if (rawWords.length > 8) expect(line).not.toContain(rawWords);
}

/** A guard over `ledger` with the default store-down policy: open up to 1 unit, closed above. */
function guardOn(ledger: Ledger, cfg: Config = config({})) {
  const log = capture();
  return { guard: createGuard({ config: cfg, ledger, logger: log, onEvent: log.onEvent }), log };
}

const LIST = { credential: 'default', method: 'videos.list', tag: 'trending:US:videos.list' }; // 1 unit
const UPDATE = { credential: 'default', method: 'videos.update', tag: 'manual:videos.update' }; // 50 units

describe('Redis error families', () => {
  it('OOM (maxmemory reached, noeviction): store unavailable; a cheap spend goes through unrecorded, a dear one stops', async () => {
    const { s, a } = await fullServer();
    const ledger = await open(s.url);
    await spendError(ledger, 'OOM');

    const { guard, log } = guardOn(ledger);
    expect(await guard.spend(LIST)).toMatchObject({ allowed: true, reason: 'fail-open' });
    expect(await guard.spend(UPDATE)).toMatchObject({ allowed: false, reason: 'store-down' });
    expect(guard.stats()).toMatchObject({ failOpen: 1, failClosed: 1 });
    for (const l of log.lines) expectOurText(JSON.stringify(l), 'command not allowed when used memory');
    // Memory back: the same ledger records again, and the first spend it records is the only one
    // in the bucket (the fail-open one was not recorded).
    await a.config('SET', 'maxmemory', '0');
    const after = await guard.spend(LIST);
    expect(after).toMatchObject({ allowed: true, reason: 'allowed' });
    expect(after.remaining).toBe(after.ceiling - 1);
  });

  it('MISCONF (the last RDB save failed, stop-writes-on-bgsave-error): store unavailable', async () => {
    // `dbfilename` is a protected config; an RDB save onto a non-empty directory fails even for root.
    const s = await server(['--enable-protected-configs', 'yes']);
    mkdirSync(join(s.dir, 'blocked', 'x'), { recursive: true });
    const a = await admin(s);
    await a.set('some', 'data');
    await a.config('SET', 'dbfilename', 'blocked');
    await a.config('SET', 'save', '3600 1');
    await a.config('SET', 'stop-writes-on-bgsave-error', 'yes');
    await a.bgsave();
    await until('the RDB save has failed', async () => {
      const p = await info(a, 'persistence');
      return /rdb_bgsave_in_progress:0/.test(p) && /rdb_last_bgsave_status:err/.test(p);
    });
    const ledger = await open(s.url);
    await spendError(ledger, 'MISCONF');
    const { guard } = guardOn(ledger);
    expect(await guard.spend(LIST)).toMatchObject({ allowed: true, reason: 'fail-open' });
    expect(await guard.spend(UPDATE)).toMatchObject({ allowed: false, reason: 'store-down' });
  });

  it('READONLY (a spend sent to a replica): store unavailable', async () => {
    // The primary sends its data at once (no wait for more replicas to share a diskless sync).
    const primary = await server(['--repl-diskless-sync-delay', '0']);
    const replica = await server();
    const a = await admin(replica);
    await a.replicaof('127.0.0.1', primary.port);
    await until('the replica is in sync', async () =>
      /master_link_status:up/.test(await info(a, 'replication')),
    );
    const ledger = await open(replica.url);
    await spendError(ledger, 'READONLY');
  });

  it('MASTERDOWN (a replica that lost its primary, replica-serve-stale-data no): store unavailable', async () => {
    const primary = await server(['--repl-diskless-sync-delay', '0']);
    const replica = await server(['--replica-serve-stale-data', 'no']);
    const a = await admin(replica);
    await a.replicaof('127.0.0.1', primary.port);
    await until('the replica is in sync', async () =>
      /master_link_status:up/.test(await info(a, 'replication')),
    );
    const ledger = await open(replica.url);
    await primary.stop();
    await until('the replica sees its primary down', async () =>
      /master_link_status:down/.test(await info(a, 'replication')),
    );
    await spendError(ledger, 'MASTERDOWN');
    await expect(ledger.peek({ key: B[0]!.key, windowMs: HOUR })).rejects.toMatchObject({
      code: 'QG_STORE_UNAVAILABLE',
      message: expect.stringMatching(/peek failed: .*\(MASTERDOWN\)$/),
    });
  });

  it('BUSY (a script running past busy-reply-threshold): store unavailable', async () => {
    const s = await server(['--busy-reply-threshold', '100']);
    const ledger = await open(s.url);
    await ledger.ping();
    // Connected before the script starts: a client connecting to a busy server fails its ready
    // check (INFO answers BUSY) and sees its connection closed.
    const a = await admin(s);
    // A read-only script that spins for at most 20 s of the server's clock; SCRIPT KILL ends it as
    // soon as the spend has been answered, so the test does not depend on how fast the machine is.
    const spin =
      'local t = tonumber(redis.call("TIME")[1]) while tonumber(redis.call("TIME")[1]) - t < 20 do end return 1';
    // Its client is cut off when the server stops at the end of the test.
    const busy = execFileP('redis-cli', ['-p', String(s.port), 'EVAL', spin, '0']).then(
      () => undefined,
      () => undefined,
    );
    closers.push(() => busy);
    await until('the script is past the threshold', async () => {
      const r = await a.ping().catch((e: unknown) => e);
      return r instanceof Error && /^BUSY /.test(r.message);
    });
    await spendError(ledger, 'BUSY');
    await a.script('KILL').catch(() => undefined);
  });

  it('LOADING (a server loading its data set): store unavailable', async () => {
    const s = await server(['--enable-debug-command', 'yes']);
    const a = await admin(s);
    // 20,000 keys at 100 µs each: a reload of about 2 s, answering other clients meanwhile.
    await a.call('DEBUG', 'POPULATE', '20000', 'fill', '10');
    await a.config('SET', 'key-load-delay', '100');
    await a.config('SET', 'loading-process-events-interval-bytes', '1024');
    const ledger = await open(s.url);
    await ledger.ping();
    // Its client is cut off when the server stops at the end of the test, reload or not.
    void execFileP('redis-cli', ['-p', String(s.port), 'DEBUG', 'RELOAD']).catch(() => undefined);
    await until('the server is loading', async () => {
      const r = await a.ping().catch((e: unknown) => e);
      return r instanceof Error && /^LOADING /.test(r.message);
    });
    await spendError(ledger, 'LOADING');
  });

  it('a connection gone (server killed, offline queue off): store unavailable, without ioredis text', async () => {
    const s = await server();
    const ledger = await open(s.url);
    await ledger.ping();
    await s.stop();
    for (let i = 0; i < 3; i++) {
      const e = (await ledger.spend({ budgets: B, cost: 1 }).catch((x: unknown) => x)) as Error & {
        cause?: Error;
      };
      expect(e).toMatchObject({ code: 'QG_STORE_UNAVAILABLE' });
      expectOurText(e.message, e.cause?.message ?? '');
      await sleep(100);
    }
  });

  it('a hung server (SIGSTOP): store unavailable, no answer within the command timeout, in our words', async () => {
    const s = await server();
    const ledger = await open(s.url);
    await ledger.ping();
    s.proc.kill('SIGSTOP');
    closers.push(() => {
      s.proc.kill('SIGCONT');
    });
    const e = (await ledger.spend({ budgets: B, cost: 1 }).catch((x: unknown) => x)) as Error & {
      cause?: Error;
    };
    expect(e).toMatchObject({ code: 'QG_STORE_UNAVAILABLE' });
    expect(e.message).toMatch(
      /spend failed: no answer within the command timeout \(store\.commandTimeoutMs\)$/,
    );
    expect(e.cause?.message).toBe('Command timed out');
  });

  it('a reply no family expects is a bug (70) that names only its code', async () => {
    const s = await server();
    const a = await admin(s);
    const raw = await a.call('NOSUCHCOMMAND', 'an-arg').catch((e: unknown) => e);
    const e = mapRedisError(raw, 'spend', '127.0.0.1:1') as Error & { code: string; exitCode: number };
    expect(e).toMatchObject({ code: 'QG_INTERNAL', exitCode: 70 });
    expect(e.message).toBe(
      'Redis ledger at 127.0.0.1:1: spend failed: Redis answered with an error quota-guard does not expect (ERR)',
    );
    // The cause keeps the reply's first line, not the command ioredis hung on the error (an AUTH's
    // password, a script's arguments).
    expect((raw as { command?: unknown }).command).toBeDefined();
    expect(Object.getOwnPropertyNames(e.cause).sort()).toEqual(['message', 'name', 'stack']);
  });
});

describe('the CLI on a full Redis', () => {
  it('spend: a cheap one goes through unrecorded (0), a dear one is one line and 69, with no Redis text', async () => {
    const { s } = await fullServer();
    const file = configFile({
      store: s.url,
      credentials: [{ id: 'default', apiKeyEnv: 'QG_FAMILY_KEY' }],
    });
    const env = { QG_FAMILY_KEY: 'k-family' };
    const [cheap, dear] = await Promise.all([
      runChild(['spend', 'default', '--cost', '1', '--config', file], env),
      runChild(['spend', 'default', '--cost', '5000', '--config', file], env),
    ]);
    expect(cheap.code).toBe(0);
    expect(cheap.stdout).toMatch(/^allowed: 1 unit of default\/units \(scheduled\) without recording it/);
    expect(dear.code).toBe(69);
    expect(dear.stdout.trim().split('\n')).toEqual([
      'denied: 5,000 units of default/units (scheduled): the ledger store is unavailable and this call site fails closed',
    ]);
    for (const r of [cheap, dear]) {
      const all = r.stdout + r.stderr;
      expectOurText(all, "command not allowed when used memory > 'maxmemory'");
      expect(all).not.toMatch(/OOM command not allowed|maxmemory'\./);
    }
  });
});
