/**
 * The drill with the reconcile on (72 s day, 1,000 units, SQLite, as drill.test.ts sizes it for a
 * loaded 2-core machine): the 20 % spent behind the guard's back at mid-day is recorded as outside
 * spend within the lag and a couple of periods, the guard stops before the upstream says the quota
 * is used up, and at the day's end Google's count and the ledger's (ours + outside) agree within
 * what the upstream charged in the last lag. Our own entries still equal what the simulator charged.
 */
import { expect, it } from 'vitest';
import { runDrill } from '../../src/drill/index.js';

it('sees the spend behind the guard, budgets it, and ends the day agreeing with Google', async () => {
  const r = await runDrill({ daySeconds: 72, quota: 1_000, reconcile: true });
  const byName = Object.fromEntries(r.checks.map((c) => [c.name, c]));
  for (const name of [
    'reconcileSawBehind',
    'noExhaustionAnswers',
    'upstreamEqualsLedger',
    'chargedEqualsRecorded',
    'trendingRunsCompleted',
    'scheduledDenied',
    'noFailOpen',
  ])
    expect(byName[name], `${name}: ${byName[name]?.detail}`).toMatchObject({ ok: true });
  const x = r.reconcile!;
  expect(x.runs).toBeGreaterThan(10);
  expect(x.failed).toBe(0);
  expect(x.outsideUnits).toBe(200);
  expect(x.seenAfterMinutes).not.toBeNull();
  // Google's count is ours and the outside spend: the ledger holds both.
  expect(x.upstreamAtEnd - x.ledgerAtEnd).toBe(x.difference);
  expect(Math.abs(x.difference)).toBeLessThanOrEqual(x.chargedInLastLag);
  // No exhaustion answer: the guard stopped first, the bucket was never blocked.
  expect(r.upstreamQuotaExceededTotal).toBe(0);
  expect(r.blockedAtDayFraction).toBeNull();
  // Our own entries equal what the simulator charged for our requests; the outside ones are beside them.
  const units = r.buckets['units']!;
  expect(units.outside).toBe(200);
  expect(r.chargedUnits).toBe(r.recordedUnits);
  expect(units.recorded).toBe(units.charged);
  // Budgeted: ours stayed within what the scheduled ceiling leaves once the outside spend counts
  // (the reserve kept), and the backfill filled most of what its own ceiling leaves (the drill's
  // 99 % needs a quiet machine; docs/operations.md). Trending runs after the backfill reached its
  // ceiling may spend a few units past it, under their own.
  expect(units.served).toBeLessThanOrEqual(units.quota - units.reserve - 200);
  expect(x.utilisationWithinCeiling).toBeGreaterThan(0.75);
  expect(x.utilisationWithinCeiling).toBeLessThanOrEqual(1.05);
}, 200_000);
