import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createGuard } from '../../src/guard/index.js';
import { openLedger } from '../../src/ledger/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { type RedisServer, startRedisServer } from '../harness/redis.js';
import { capture, config } from './helpers.js';

let server: RedisServer;
let ledger: Ledger;

beforeAll(async () => {
  server = await startRedisServer();
  ledger = await openLedger(server.url, {
    keyPrefix: `${inject('keyPrefix')}down:`,
    commandTimeoutMs: 500,
    connectTimeoutMs: 500,
  });
});

afterAll(async () => {
  await ledger?.close();
  await server?.stop();
  if (server) rmSync(server.dir, { recursive: true, force: true });
});

describe('store down: fail-open / fail-closed per call site', () => {
  it('lets cheap calls through (logged, counted), refuses dear ones, and resumes when Redis returns', async () => {
    const log = capture();
    const guard = createGuard({
      config: config({ storeDown: { sites: { backfill: 'closed' } } }),
      ledger,
      logger: log,
      onEvent: log.onEvent,
    });
    const list = { credential: 'default', method: 'videos.list', tag: 'trending:US:videos.list' };
    const update = { credential: 'default', method: 'videos.update', tag: 'manual:videos.update' }; // 50 units
    expect(await guard.spend(list)).toMatchObject({ allowed: true, reason: 'allowed' });

    await server.stop();
    const started = Date.now();
    expect(await guard.spend(list)).toMatchObject({ allowed: true, reason: 'fail-open', failMode: 'open' });
    expect(await guard.spend(update)).toMatchObject({
      allowed: false,
      reason: 'store-down',
      failMode: 'closed',
    });
    // A site can be closed whatever the cost; a call can say open whatever the cost.
    expect(await guard.spend({ ...list, tag: 'backfill:videos.list' })).toMatchObject({
      allowed: false,
      failMode: 'closed',
    });
    expect(await guard.spend({ ...update, failMode: 'open' })).toMatchObject({
      allowed: true,
      reason: 'fail-open',
    });
    const stop = await guard.acquire(update);
    expect(stop).toMatchObject({ ok: false, reason: 'store-down', exitCode: 69 });
    const acquired = await guard.acquire(list);
    expect(acquired).toMatchObject({ ok: true, spend: { reason: 'fail-open' } });
    // A dead Redis answers fast: no call hangs (a generous bound for a loaded machine).
    expect(Date.now() - started).toBeLessThan(10_000);

    expect(guard.stats()).toMatchObject({ failOpen: 3, failClosed: 3 });
    const failOpenLines = log.lines.filter((l) => /fail-open/.test(l.msg));
    expect(failOpenLines).toHaveLength(3);
    expect(failOpenLines[0]!.obj).toMatchObject({
      credential: 'default',
      method: 'videos.list',
      cost: 1,
      failOpenTotal: 1,
    });
    expect(log.events.filter((e) => e.type === 'fail-open')).toHaveLength(3);

    await server.restart();
    let back = false;
    for (let i = 0; i < 100 && !back; i++) {
      back = (await guard.spend(list)).reason === 'allowed';
      if (!back) await sleep(100);
    }
    expect(back).toBe(true);
    expect((await guard.spend(update)).allowed).toBe(true);
  });
});
