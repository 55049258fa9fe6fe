import { describe, expect, it } from 'vitest';
import { createGuard } from '../../src/guard/index.js';
import { BACKENDS, capture, config } from './helpers.js';

const DAY = 86_400_000;

describe.each(BACKENDS.slice(0, 2))('guard.report ($name)', ({ open }) => {
  it('keeps a sent spend, refunds a never-sent one, and blocks on exhausted until the reset', async () => {
    const ledger = await open();
    try {
      const log = capture();
      // The ledger keeps real time; the guard's clock and reset are pinned relative to it.
      let now = Date.now();
      const reset = now + 3 * 3_600_000;
      const guard = createGuard({
        config: config({}),
        ledger,
        logger: log,
        onEvent: log.onEvent,
        now: () => now,
        nextReset: () => reset,
      });
      const used = async () => (await ledger.peek({ key: 'qg:{default}:units', windowMs: DAY })).used;
      const args = { credential: 'default', method: 'videos.list' };
      const a = await guard.spend(args);
      expect(await guard.report(a, { kind: 'sent' })).toEqual({ kind: 'sent', ok: true });
      const b = await guard.spend(args);
      expect(await guard.report(b, { kind: 'never-sent' })).toEqual({
        kind: 'never-sent',
        ok: true,
        refunded: true,
      });
      // Only the sent spend is still charged.
      expect(await used()).toBe(a.cost);
      // The same report again takes nothing back and counts no second refund.
      await guard.report(b, { kind: 'never-sent' });
      expect(await used()).toBe(a.cost);
      expect(guard.stats().refunds).toBe(1);
      expect(log.events.filter((e) => e.type === 'refund')).toHaveLength(1);

      const c = await guard.spend(args);
      now += 1000;
      // An until beyond the upstream's reset is cut to the reset.
      const r = await guard.report(c, { kind: 'exhausted', reason: 'quotaExceeded', until: reset + DAY });
      expect(r).toMatchObject({ kind: 'exhausted', ok: false, bucket: 'units', until: reset });
      if (r.kind !== 'exhausted') throw new Error('unreachable');
      expect(r.stop).toMatchObject({
        reason: 'upstream-quota',
        exitCode: 75,
        blockedUntil: reset,
        resumeAt: reset,
      });
      expect(r.stop.message).toContain('quotaExceeded');
      const next = await guard.spend(args);
      expect(next).toMatchObject({ allowed: false, reason: 'blocked', blockedUntil: reset });
      expect(guard.stats().stops).toBe(1);
    } finally {
      await ledger.close();
    }
  });

  it('blocks the bucket the answer names, and only until the given time', async () => {
    const ledger = await open();
    try {
      const now = Date.now();
      const guard = createGuard({
        config: config({ credentials: [{ id: 'default', profile: 'youtube-2026' }] }),
        ledger,
        logger: capture(),
        now: () => now,
        nextReset: () => now + DAY,
      });
      const spent = await guard.spend({ credential: 'default', method: 'videos.list' });
      const r = await guard.report(spent, {
        kind: 'exhausted',
        until: now + 60_000,
        quota: {
          period: 'day',
          limit: 'defaultSearchListPerDayPerProject',
          metric: 'youtube.googleapis.com/search_list',
        },
      });
      expect(r).toMatchObject({ kind: 'exhausted', until: now + 60_000 });
      if (r.kind !== 'exhausted') throw new Error('unreachable');
      expect(r.bucket).not.toBe(spent.bucket);
      expect((await guard.spend({ credential: 'default', method: 'videos.list' })).allowed).toBe(true);
    } finally {
      await ledger.close();
    }
  });

  it('refuses an outcome it does not know, or an until in the past', async () => {
    const ledger = await open();
    try {
      const guard = createGuard({ config: config({}), ledger, logger: capture() });
      const spent = await guard.spend({ credential: 'default', method: 'videos.list' });
      await expect(guard.report(spent, { kind: 'lost' } as never)).rejects.toMatchObject({
        code: 'QG_INVALID_ARGUMENT',
      });
      await expect(guard.report(spent, { kind: 'exhausted', until: 1 })).rejects.toMatchObject({
        code: 'QG_INVALID_ARGUMENT',
        field: 'outcome.until',
      });
    } finally {
      await ledger.close();
    }
  });
});
