/**
 * Replaying the guard's journal, on each store: a line replayed three times (a process that died
 * before taking it out, then two more passes) is counted once, at the time it was spent; a line
 * older than the window is dropped and counted; an unknown spend that was not used never counts;
 * another store's lines are left alone.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGuard } from '../../src/guard/index.js';
import { type JournalEntry, JournalFile } from '../../src/guard/journal.js';
import { bucketWindow } from '../../src/guard/keys.js';
import { storeIdentity } from '../../src/guard/late.js';
import { quotaStatus } from '../../src/guard/status.js';
import { openLedger } from '../../src/ledger/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { recordedLateNotices } from '../../src/metrics/late-notice.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { openQuotaGuard } from '../../src/quota-guard.js';
import { capture, config, openRedis, openSqlite } from '../guard/helpers.js';
import { freePort } from '../harness/redis.js';
import { fileTempDir } from '../harness/temp.js';

const tmp = fileTempDir('qg-replay-').dir;
let seq = 0;
const HOUR = 3_600_000;

const STORES: Array<{ name: string; open: () => Promise<Ledger> }> = [
  { name: 'sqlite', open: () => openSqlite() },
  { name: 'redis', open: () => openRedis() },
];

describe.each(STORES)('journal replay on $name', ({ open }) => {
  it('a line replayed 3 times is recorded once, at its original time', async () => {
    const ledger = await open();
    const cfg = config({});
    const journal = new JournalFile({ path: join(tmp, `j${seq++}.jsonl`) });
    const log = capture();
    const guard = createGuard({ config: cfg, ledger, logger: log, onEvent: log.onEvent, journal });
    const at = Date.now() - 2 * HOUR;
    const line: JournalEntry = {
      id: `once-${seq}`,
      op: 'record',
      written: at,
      store: storeIdentity(cfg),
      body: { credential: 'default', bucket: 'units', tier: 'scheduled', cost: 7, tag: 'w1', at },
    };
    const results = [];
    for (let n = 0; n < 3; n++) {
      // The line is there again: a pass that died before taking it out, a copy, a second host.
      expect(await journal.append([line])).toEqual({ ok: true });
      results.push(await guard.replayJournal());
      expect(journal.size()).toBe(0);
    }
    expect(results.map((r) => r.recorded)).toEqual([1, 0, 0]);
    expect(results.map((r) => r.resolved)).toEqual([1, 1, 1]);
    const credential = cfg.credential('default');
    const { key, windowMs } = bucketWindow(credential, credential.buckets['units']!, Date.now());
    const snap = await ledger.peek({ key, windowMs });
    expect(snap).toMatchObject({ used: 7, calls: 1, oldestAt: at });
    // The store counts what arrived late, for every process that reads it (status, the page).
    expect(await ledger.late({ key, windowMs })).toEqual({ units: 7, entries: 1, oldestAt: at });
    // A spend made now is not late; reconcile's replace (outside spend) is not late either.
    await guard.spend({ credential: 'default', cost: 2 });
    await ledger.record({
      budgets: [{ key, windowMs }],
      cost: 5,
      tag: 'outside:units',
      at: Date.now(),
      replace: true,
      entry: { key: `${key}:outside`, id: `outside-${seq}`, request: 'outside' },
    });
    expect(await ledger.late({ key, windowMs })).toEqual({ units: 7, entries: 1, oldestAt: at });
    expect(guard.stats()).toMatchObject({ recordedLate: 1, recordedLateUnits: 7, droppedLate: 0 });
    const late = log.events.flatMap((e) => (e.type === 'recorded-late' ? [e.late.outcome] : []));
    expect(late).toEqual(['recorded', 'replayed', 'replayed']);
    // What an operator sees: status --json's field, the summary line, the metric.
    const report = await quotaStatus(cfg, ledger);
    const bucket = report.credentials[0]!.buckets.find((b) => b.id === 'units')!;
    expect(bucket.recordedLate).toEqual({ units: 7, entries: 1, oldestAt: new Date(at).toISOString() });
    const notices = recordedLateNotices(report);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.text).toMatch(
      /^default\/units recorded late: 7 units from 1 entry, oldest spent 2h 0\dm ago$/,
    );
    const metrics = new Metrics();
    for (const e of log.events) metrics.guardEvent(e);
    const text = await metrics.registry.metrics();
    expect(text).toContain('quota_guard_recorded_late_units_total{credential="default",bucket="units"} 7');
    expect(text).toContain('quota_guard_recorded_late_entries_total{credential="default",bucket="units"} 1');
    await ledger.close();
  });

  it('older than the window: dropped and counted; unknown and unused: never counts; another store: kept', async () => {
    const ledger = await open();
    const cfg = config({});
    const journal = new JournalFile({ path: join(tmp, `j${seq++}.jsonl`) });
    const guard = createGuard({ config: cfg, ledger, logger: capture(), journal });
    const store = storeIdentity(cfg);
    const body = { credential: 'default', bucket: 'units', tier: 'scheduled' as const, cost: 3, tag: 'w' };
    const now = Date.now();
    await journal.append([
      { id: `old-${seq}`, op: 'record', written: now, store, body: { ...body, at: now - 30 * HOUR } },
      { id: `unused-${seq}`, op: 'unknown', written: now, store, body: { ...body, at: now, used: false } },
      {
        id: `other-${seq}`,
        op: 'record',
        written: now,
        store: 'redis://elsewhere:6379',
        body: { ...body, at: now },
      },
    ]);
    const r = await guard.replayJournal();
    expect(r).toMatchObject({ resolved: 2, recorded: 0, dropped: 1, left: 0, failed: 0 });
    expect(guard.stats()).toMatchObject({ recordedLate: 0, droppedLate: 1 });
    // The unused entry is remembered as void: its spend arriving now charges nothing.
    const late = await guard.spend({ credential: 'default', cost: 3, tag: 'w', entry: `unused-${seq}` });
    expect(late).toMatchObject({ allowed: false, replayed: true });
    const credential = cfg.credential('default');
    const { key, windowMs } = bucketWindow(credential, credential.buckets['units']!, Date.now());
    expect((await ledger.peek({ key, windowMs })).used).toBe(0);
    expect(await ledger.late({ key, windowMs })).toEqual({ units: 0, entries: 0 });
    // The other store's line stays for whoever opens that store.
    expect((await journal.read()).entries.map((e) => e.id)).toEqual([`other-${seq}`]);
    await ledger.close();
  });
});

describe('openQuotaGuard replays the journal it keeps', () => {
  it('a line left by an earlier process is in the ledger once the handle is closed', async () => {
    const file = join(tmp, `h${seq++}.db`);
    const cfg = config({ store: { url: `sqlite:${file}` } });
    const path = join(tmp, `j${seq++}.jsonl`);
    const at = Date.now() - HOUR;
    await new JournalFile({ path }).append([
      {
        id: `left-${seq}`,
        op: 'record',
        written: at,
        store: storeIdentity(cfg),
        body: { credential: 'default', bucket: 'units', tier: 'scheduled', cost: 4, tag: 'w', at },
      },
    ]);
    const qg = await openQuotaGuard(cfg, { journal: path, history: false, logger: capture() });
    await qg.close();
    expect(new JournalFile({ path }).size()).toBe(0);
    const ledger = await openLedger(`sqlite:${file}`);
    const credential = cfg.credential('default');
    const { key, windowMs } = bucketWindow(credential, credential.buckets['units']!, Date.now());
    expect(await ledger.late({ key, windowMs })).toEqual({ units: 4, entries: 1, oldestAt: at });
    await ledger.close();
  });
});

describe('a journalled spend its caller takes back', () => {
  it('goes from the journal, or from the ledger once replayed: it never counts', async () => {
    const cfg = config({});
    const journal = new JournalFile({ path: join(tmp, `j${seq++}.jsonl`) });
    const away = await openLedger(`redis://127.0.0.1:${await freePort()}`, {
      allowUnreachable: true,
      connectTimeoutMs: 300,
      commandTimeoutMs: 300,
    });
    const down = createGuard({ config: cfg, ledger: away, logger: capture(), journal });
    const first = await down.spend({ credential: 'default', cost: 3, failMode: 'open' });
    const second = await down.spend({ credential: 'default', cost: 5, failMode: 'open' });
    expect([first.journal, second.journal].every((id) => id !== undefined)).toBe(true);
    await away.close();

    const ledger = await openSqlite();
    const guard = createGuard({ config: cfg, ledger, logger: capture(), journal });
    // Not replayed yet: its line goes.
    expect(await guard.refund(first)).toBe(true);
    expect((await journal.read()).entries.map((e) => e.id)).toEqual([second.journal]);
    expect(await guard.replayJournal()).toMatchObject({ recorded: 1 });
    const credential = cfg.credential('default');
    const { key, windowMs } = bucketWindow(credential, credential.buckets['units']!, Date.now());
    expect((await ledger.peek({ key, windowMs })).used).toBe(5);
    // Replayed already: its entry is taken out of the ledger.
    expect(await guard.refund(second)).toBe(true);
    expect((await ledger.peek({ key, windowMs })).used).toBe(0);
    expect(await ledger.late({ key, windowMs })).toEqual({ units: 0, entries: 0 });
    await ledger.close();
  });
});
