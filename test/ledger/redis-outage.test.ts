/**
 * A Redis that goes away: calls must fail fast with StoreUnavailableError (so the guard can fail
 * open or closed), never hang or queue, never leak the password, and the same ledger object must
 * work again once Redis is back. Each test runs its own server, which it stops and restarts.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { openLedger, StoreUnavailableError } from '../../src/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { redisServers } from '../harness/redis.js';

const HOUR = 3_600_000;
const B = [{ key: 'outage:{k}', limit: 1000, windowMs: HOUR }];

const servers = redisServers();
const server = servers.start;
const ledgers: Ledger[] = [];
afterEach(async () => {
  for (const l of ledgers.splice(0)) await l.close();
  await servers.stopAll();
});

async function open(url: string, opts = {}): Promise<Ledger> {
  const l = await openLedger(url, opts);
  ledgers.push(l);
  return l;
}

async function timed<T>(p: Promise<T>): Promise<{ error: unknown; ms: number }> {
  const t0 = performance.now();
  try {
    await p;
    return { error: undefined, ms: performance.now() - t0 };
  } catch (error) {
    return { error, ms: performance.now() - t0 };
  }
}

/** Retry `fn` until it resolves (bounded: 15 s). */
async function eventually<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('Redis ledger when Redis goes away', () => {
  it('rejects spend and peek with StoreUnavailableError at once when the server dies, then recovers', async () => {
    const s = await server();
    const ledger = await open(s.url);
    expect((await ledger.spend({ budgets: B, cost: 5 })).allowed).toBe(true);
    await s.stop();
    const spend = await timed(ledger.spend({ budgets: B, cost: 1 }));
    expect(spend.error).toBeInstanceOf(StoreUnavailableError);
    expect(spend.error).toMatchObject({ code: 'QG_STORE_UNAVAILABLE', exitCode: 69 });
    expect((spend.error as Error).message).toMatch(
      new RegExp(`^Redis ledger at ${new URL(s.url).host}: spend failed`),
    );
    expect(spend.ms).toBeLessThan(3000);
    const peek = await timed(ledger.peek({ key: B[0]!.key, windowMs: HOUR }));
    expect(peek.error).toMatchObject({ code: 'QG_STORE_UNAVAILABLE' });
    expect(peek.ms).toBeLessThan(3000);
    await expect(ledger.ping()).rejects.toMatchObject({ code: 'QG_STORE_UNAVAILABLE' });

    await s.restart();
    // The same ledger object, no reopen: it reconnects by itself.
    const d = await eventually(() => ledger.spend({ budgets: B, cost: 2 }));
    expect(d.allowed).toBe(true);
    expect((await ledger.peek({ key: B[0]!.key, windowMs: HOUR })).used).toBe(2); // no persistence
  });

  it('times out a hung server after the command timeout (about a second), then recovers', async () => {
    const s = await server();
    const ledger = await open(s.url);
    await ledger.spend({ budgets: B, cost: 1 });
    s.proc.kill('SIGSTOP');
    try {
      const r = await timed(ledger.spend({ budgets: B, cost: 1 }));
      expect(r.error).toMatchObject({ code: 'QG_STORE_UNAVAILABLE' });
      expect(r.ms).toBeGreaterThan(800);
      expect(r.ms).toBeLessThan(5000);
    } finally {
      s.proc.kill('SIGCONT');
    }
    const d = await eventually(() => ledger.spend({ budgets: B, cost: 1 }));
    expect(d.allowed).toBe(true);
  });

  it('fails open with StoreUnavailableError, or opens anyway with allowUnreachable and works once Redis is up', async () => {
    const s = await server();
    await s.stop();
    const r = await timed(openLedger(s.url));
    expect(r.error).toMatchObject({ code: 'QG_STORE_UNAVAILABLE' });
    expect(r.ms).toBeLessThan(5000);

    const ledger = await open(s.url, { allowUnreachable: true });
    await expect(ledger.spend({ budgets: B, cost: 1 })).rejects.toMatchObject({
      code: 'QG_STORE_UNAVAILABLE',
    });
    await s.restart();
    expect((await eventually(() => ledger.spend({ budgets: B, cost: 1 }))).allowed).toBe(true);
  });

  it('reports a wrong password as a config error, and never puts the password in an error or its cause', async () => {
    const s = await server();
    const admin = new Redis(s.url);
    await admin.config('SET', 'requirepass', 'pw-s3cret-xyz');
    admin.disconnect();
    const ledger = await open(`redis://:pw-s3cret-xyz@127.0.0.1:${s.port}`);
    expect((await ledger.spend({ budgets: B, cost: 1 })).allowed).toBe(true);
    const seen = new Set<unknown>();
    const dump = (e: unknown): string => {
      if (e === null || typeof e !== 'object' || seen.has(e)) return String(e);
      seen.add(e);
      const o = e as { message?: string; stack?: string; cause?: unknown };
      return [o.message, o.stack, JSON.stringify(Object.keys(o)), dump(o.cause)].join('\n');
    };
    const wrong = await openLedger(`redis://:wrong-s3cret@127.0.0.1:${s.port}`).catch((e: unknown) => e);
    expect(wrong).toMatchObject({ code: 'QG_CONFIG_INVALID' });
    expect(dump(wrong)).not.toContain('s3cret');
    await s.stop();
    const err = await ledger.spend({ budgets: B, cost: 1 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'QG_STORE_UNAVAILABLE' });
    expect(dump(err)).not.toContain('s3cret');
  });
});
