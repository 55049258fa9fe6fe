/**
 * Redis specifics the contract cannot see: scripts go by SHA and survive SCRIPT FLUSH, the SHAs
 * match what the server computes, every key carries an expiry just past its window, a call is one
 * log entry whatever its cost, and a budget's keys share one slot.
 */
import { rmSync } from 'node:fs';
import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openLedger } from '../../src/index.js';
import { internalKeys, loadScripts } from '../../src/ledger/scripts.js';
import type { Ledger } from '../../src/ledger/types.js';
import { keyMaker, sleep } from '../contract/suite.js';
import { keysUnder, startRedisServer } from '../harness/redis.js';

const HOUR = 3_600_000;

async function commandCalls(r: Redis, name: string): Promise<number> {
  const info = await r.info('commandstats');
  return Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
}
const prefix = inject('keyPrefix');

describe('Redis ledger specifics', () => {
  let ledger: Ledger;
  let redis: Redis;
  const key = keyMaker();

  beforeAll(async () => {
    ledger = await openLedger(inject('redisUrl'), { keyPrefix: prefix });
    redis = new Redis(inject('redisUrl'));
  });
  afterAll(async () => {
    await ledger?.close();
    redis?.disconnect();
  });

  it('every lua/ file, includes inlined, has the SHA1 that SCRIPT LOAD answers', async () => {
    const scripts = loadScripts();
    expect(scripts.map((s) => s.file).sort()).toEqual(
      [
        'block-1',
        'frees-2',
        'peek-2',
        'late-2',
        'per-minute-2',
        'record',
        'record-run',
        'refund',
        'spend',
        'unblock-1',
        'used-2',
        'void',
      ].sort(),
    );
    for (const s of scripts) {
      expect(s.lua).not.toMatch(/^\s*--- @include/m);
      expect(await redis.script('LOAD', s.lua)).toBe(s.sha);
    }
  });

  it('calls go by SHA, and still work after SCRIPT FLUSH between two spends', async () => {
    // A server of our own: flushing its script cache disturbs nobody.
    const server = await startRedisServer();
    const own = await openLedger(server.url);
    const admin = new Redis(server.url);
    try {
      const k = key('flush');
      const spendSha = loadScripts().find((s) => s.file === 'spend')!.sha;
      const b = [{ key: k, limit: 10, windowMs: HOUR }];
      expect((await own.spend({ budgets: b, cost: 3 })).allowed).toBe(true);
      expect((await own.spend({ budgets: b, cost: 1 })).allowed).toBe(true);
      expect(await admin.script('EXISTS', spendSha)).toEqual([1]);
      await admin.script('FLUSH');
      expect(await admin.script('EXISTS', spendSha)).toEqual([0]);
      expect((await own.spend({ budgets: b, cost: 4 })).allowed).toBe(true);
      expect((await own.peek({ key: k, windowMs: HOUR })).used).toBe(8);
      expect(await admin.script('EXISTS', spendSha)).toEqual([1]);
      // Once the script is cached again, a spend is one EVALSHA and no EVAL.
      const [evalsha, evals] = [await commandCalls(admin, 'evalsha'), await commandCalls(admin, 'eval')];
      expect((await own.spend({ budgets: b, cost: 1 })).allowed).toBe(true);
      expect(await commandCalls(admin, 'evalsha')).toBe(evalsha + 1);
      expect(await commandCalls(admin, 'eval')).toBe(evals);
    } finally {
      await own.close();
      admin.disconnect();
      await server.stop();
      rmSync(server.dir, { recursive: true, force: true });
    }
  });

  it('answers every spend of a one-tick burst larger than one held write, in the order issued', async () => {
    // Spends issued in one tick share socket writes, 8 at most per write: 30 span several writes.
    const k = key('burst');
    const ds = await Promise.all(
      Array.from({ length: 30 }, () =>
        ledger.spend({ budgets: [{ key: k, limit: 20, windowMs: HOUR }], cost: 1 }),
      ),
    );
    expect(ds.map((d) => d.allowed)).toEqual([...Array(20).fill(true), ...Array(10).fill(false)]);
    expect(ds.slice(0, 20).map((d) => d.remaining)).toEqual(Array.from({ length: 20 }, (_v, i) => 19 - i));
    expect(new Set(ds.map((d) => (d.allowed ? d.id : undefined)).filter(Boolean)).size).toBe(20);
    expect((await ledger.peek({ key: k, windowMs: HOUR })).used).toBe(20);
  });

  it('stores a call of cost 100 as one sorted-set member; memory does not grow with cost', async () => {
    const small = key('mem1');
    const big = key('mem100');
    for (let i = 0; i < 50; i++) {
      await ledger.spend({ budgets: [{ key: small, limit: 100_000, windowMs: HOUR }], cost: 1, tag: 't' });
      await ledger.spend({ budgets: [{ key: big, limit: 100_000, windowMs: HOUR }], cost: 100, tag: 't' });
    }
    const logSmall = internalKeys(small, prefix).log;
    const logBig = internalKeys(big, prefix).log;
    expect(await redis.zcard(logSmall)).toBe(50);
    expect(await redis.zcard(logBig)).toBe(50);
    const mSmall = Number(await redis.memory('USAGE', logSmall));
    const mBig = Number(await redis.memory('USAGE', logBig));
    // The member is 2 characters longer ("100" vs "1"): nothing more.
    expect(mBig).toBeLessThan(mSmall * 1.3);
  });

  it('gives every key it writes an expiry just past its window, and a block keeps its marker alive', async () => {
    const k = key('ttl');
    const W = 60_000;
    await ledger.spend({ budgets: [{ key: k, limit: 10, windowMs: W }], cost: 1 });
    const { log, meta } = internalKeys(k, prefix);
    // Expiries move in steps of W/16 (at most a minute) so that most spends need no PEXPIRE.
    const step = Math.min(Math.ceil(W / 16), 60_000);
    for (const name of [log, meta]) {
      const ttl = await redis.pttl(name);
      expect(ttl).toBeGreaterThan(W - 10_000);
      expect(ttl).toBeLessThanOrEqual(W + 1000 + step);
    }
    const now = (await ledger.peek({ key: k, windowMs: W })).now;
    await ledger.block(k, now + HOUR, 'test');
    expect(await redis.pttl(meta)).toBeGreaterThan(HOUR - 10_000);
    await ledger.spend({ budgets: [{ key: k, limit: 10, windowMs: W }], cost: 1 });
    expect(await redis.pttl(meta)).toBeGreaterThan(HOUR - 10_000);
    expect(await redis.pttl(log)).toBeLessThanOrEqual(W + 1000 + step);
  });

  it('keeps the pruning marks right for an entry recorded in the past: it frees exactly when it would have', async () => {
    const k = key('past');
    const W = 4000;
    const b = { key: k, limit: 10, windowMs: W };
    const spent = await ledger.spend({ budgets: [b], cost: 2 });
    const at = spent.at - 3000;
    const entry = { key: `${k}:entry:p`, id: 'p', request: 'r' };
    expect((await ledger.record({ budgets: [b], cost: 5, entry, at })).outcome).toBe('recorded');
    const { log, meta } = internalKeys(k, prefix);
    const m = await redis.hgetall(meta);
    expect(await redis.zscore(log, 'p:5:')).toBe(String(at * 1000));
    expect(Number(m['t'])).toBe(7);
    // The oldest mark goes back to it, the fast path ends when it leaves the window, the keys
    // live at least until then.
    expect(Number(m['o'])).toBe(at * 1000);
    expect(Number(m[`f${W}`])).toBeLessThanOrEqual((at + W) * 1000);
    expect(Number(m['x'])).toBeGreaterThanOrEqual(spent.at + W + 1000);
    for (const name of [log, meta]) expect(await redis.pttl(name)).toBeGreaterThan(W);
    // Once it has left the window its units are free, and the next spend prunes it.
    await sleep(at + W - spent.at + 100);
    expect(await ledger.spend({ budgets: [b], cost: 1 })).toMatchObject({ allowed: true, remaining: 7 });
    expect(Number(await redis.hget(meta, 't'))).toBe(3);
    expect(await redis.zscore(log, 'p:5:')).toBeNull();
  });

  it('leaves nothing behind once a short window has passed', async () => {
    const k = key('idle');
    const W = 300;
    const d = await ledger.spend({ budgets: [{ key: k, limit: 10, windowMs: W }], cost: 2, tag: 'x' });
    await ledger.refund(await ledger.spend({ budgets: [{ key: k, limit: 10, windowMs: W }], cost: 1 }));
    await ledger.block(k, d.at + 200, 'short');
    await ledger.unblock(k);
    const { log, meta } = internalKeys(k, prefix);
    expect(await redis.exists(log, meta)).toBe(2);
    await sleep(W + 1000 + 500);
    expect(await redis.exists(log, meta)).toBe(0);
  });

  it('writes no key without an expiry but the store’s format key', async () => {
    const keys = await keysUnder(redis, prefix);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys).toContain(`${prefix}qg:format`);
    // Other tests' stores share the prefix: each has its own format key.
    for (const name of keys) {
      if (!name.endsWith('qg:format')) expect(await redis.pttl(name), name).toBeGreaterThan(0);
    }
  });

  it('puts the internal keys of any budget key in one slot', () => {
    for (const k of ['plain', 'yt:{cred}:units', '{x}', 'a{}b', 'a{b', 'x}{y}', '{}']) {
      const { log, meta } = internalKeys(k, 'p:');
      expect(calculateSlot(log), k).toBe(calculateSlot(meta));
    }
    expect(internalKeys('yt:{cred}:units')).toEqual({
      log: 'yt:{cred}:units:log',
      meta: 'yt:{cred}:units:meta',
    });
    expect(internalKeys('plain')).toEqual({ log: '{plain}:log', meta: '{plain}:meta' });
  });

  it('reports foreign data under a ledger key as QG_STORE_CORRUPT', async () => {
    const k = key('corrupt');
    const { log, meta } = internalKeys(k, prefix);
    await redis.hset(meta, 't', 'not a number');
    await redis.pexpire(meta, 60_000);
    await expect(
      ledger.spend({ budgets: [{ key: k, limit: 10, windowMs: 1000 }], cost: 1 }),
    ).rejects.toMatchObject({ code: 'QG_STORE_CORRUPT' });
    const k2 = key('wrongtype');
    await redis.set(internalKeys(k2, prefix).meta, 'a string, not a hash', 'PX', 60_000);
    await expect(
      ledger.spend({ budgets: [{ key: k2, limit: 10, windowMs: 1000 }], cost: 1 }),
    ).rejects.toMatchObject({ code: 'QG_STORE_CORRUPT' });
    await redis.del(log, meta);
  });
});

describe('Redis Cluster specifics', () => {
  it.skipIf(process.env.REDIS_CLUSTER_URL)(
    'registers the scripts on every master and survives SCRIPT FLUSH on all of them',
    async () => {
      const ledger = await openLedger(inject('redisClusterUrl'), { keyPrefix: prefix });
      const nodes = inject('redisClusterUrl').replace('redis-cluster://', '').split(',');
      const cluster = new Cluster(
        nodes.map((hp) => ({ host: hp.split(':')[0]!, port: Number(hp.split(':')[1]) })),
      );
      try {
        const key = keyMaker();
        // Keys on several slots: some land on each master.
        const ks = Array.from({ length: 12 }, (_v, i) => `${key('c')}-{s${i}}`);
        for (const k of ks) await ledger.spend({ budgets: [{ key: k, limit: 10, windowMs: HOUR }], cost: 1 });
        await Promise.all(cluster.nodes('master').map((n) => n.script('FLUSH')));
        for (const k of ks) {
          expect(
            (await ledger.spend({ budgets: [{ key: k, limit: 10, windowMs: HOUR }], cost: 2 })).allowed,
          ).toBe(true);
          expect((await ledger.peek({ key: k, windowMs: HOUR })).used).toBe(3);
        }
      } finally {
        await ledger.close();
        cluster.disconnect();
      }
    },
  );
});
