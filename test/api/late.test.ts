/**
 * `POST /v1/record` and `POST /v1/void` against a real `serve --decisions` on SQLite, every answer
 * checked against docs/openapi.yaml: a late spend recorded at its own time once, a void that takes
 * an entry back or keeps it from ever landing, and the token rules of a spend.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger } from '../../src/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { tmpPath } from '../job-library/helpers.js';
import { ApiClient, type Served, startServe, tokensFile, writeConfig } from './helpers.js';

const DAY = 86_400_000;
const KEY = 'qg:{default}:units';
const store = `sqlite:${tmpPath('late-ledger.db')}`;
let served: Served;
let ledger: Ledger;
let job: ApiClient;
let other: ApiClient;
let elsewhere: ApiClient;

beforeAll(async () => {
  const t = tokensFile([
    { name: 'job', credentials: ['default'] },
    { name: 'other', credentials: ['default'] },
    { name: 'elsewhere', credentials: ['second'] },
  ]);
  served = await startServe(writeConfig({ store, credentials: [{ id: 'default' }, { id: 'second' }] }), [
    '--tokens',
    t.file,
  ]);
  ledger = await openLedger(store);
  job = new ApiClient(served.url, t.secrets['job']);
  other = new ApiClient(served.url, t.secrets['other']);
  elsewhere = new ApiClient(served.url, t.secrets['elsewhere']);
});

afterAll(async () => {
  for (const c of [job, other, elsewhere]) await c?.close();
  await ledger?.close();
  await served?.stop();
});

const used = async (tag: string) => (await ledger.peek({ key: KEY, windowMs: DAY })).byTag[tag] ?? 0;
const record = (c: ApiClient, body: Record<string, unknown>) => c.call('POST', '/v1/record', body);
const voidIt = (c: ApiClient, body: Record<string, unknown>) => c.call('POST', '/v1/void', body);

describe('POST /v1/record', () => {
  it('records a spend at the time it was made, once per entry, never denied', async () => {
    const at = Date.now() - 30 * 60_000;
    const body = { credential: 'default', entry: 'late-1', method: 'videos.list', tag: 'trending:US', at };
    const first = await record(job, body);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      entry: 'late-1',
      outcome: 'recorded',
      at,
      credential: 'default',
      bucket: 'units',
      cost: 1,
      tag: 'job:trending:US:videos.list',
    });
    for (let i = 0; i < 3; i++) expect((await record(job, body)).body).toMatchObject({ outcome: 'replayed' });
    expect(await used('job:trending:US:videos.list')).toBe(1);
    const minute = Math.floor(at / 60_000) * 60_000;
    expect(
      await ledger.perMinute({ key: KEY, windowMs: DAY, fromMs: minute, toMs: minute + 60_000 }),
    ).toEqual([{ minute, own: 1, outside: 0 }]);
    // A spend sent later with the same entry charges nothing more: it was counted.
    const again = await job.spend({
      credential: 'default',
      method: 'videos.list',
      tag: 'trending:US',
      entry: 'late-1',
    });
    expect(again.body).toMatchObject({ allowed: true, replayed: true });
    expect(await used('job:trending:US:videos.list')).toBe(1);
  });

  it('is replayed for a spend that landed, and never goes past a full budget’s answer: it already happened', async () => {
    const spent = await job.spend({
      credential: 'default',
      bucket: 'units',
      cost: 3,
      tag: 'landed',
      entry: 'late-2',
    });
    expect(spent.body).toMatchObject({ allowed: true });
    const r = await record(job, {
      credential: 'default',
      bucket: 'units',
      cost: 3,
      tag: 'landed',
      entry: 'late-2',
      at: Date.now(),
    });
    expect(r.body).toMatchObject({ outcome: 'replayed', cost: 3 });
    expect(await used('job:landed')).toBe(3);
    // More than the whole ceiling would allow in one spend is still written down.
    const big = await record(job, {
      credential: 'default',
      bucket: 'units',
      cost: 9_500,
      tag: 'big',
      entry: 'late-3',
      at: Date.now(),
    });
    expect(big.body).toMatchObject({ outcome: 'recorded', cost: 9_500 });
    expect(await used('job:big')).toBe(9_500);
    // A recorded entry is an entry like any: voided, it is taken out (and the budget is free again).
    expect((await voidIt(job, { credential: 'default', entry: 'late-3' })).body).toMatchObject({
      outcome: 'refunded',
    });
    expect(await used('job:big')).toBe(0);
  });

  it('drops a spend older than the window, and writes one from a clock ahead of the store’s as now', async () => {
    const old = await record(job, {
      credential: 'default',
      bucket: 'units',
      entry: 'late-4',
      tag: 'old',
      at: Date.now() - 2 * DAY,
    });
    expect(old.body).toMatchObject({ outcome: 'dropped' });
    expect(await used('job:old')).toBe(0);
    const ahead = Date.now() + 3_600_000;
    const r = await record(job, {
      credential: 'default',
      bucket: 'units',
      entry: 'late-5',
      tag: 'ahead',
      at: ahead,
    });
    expect(r.body).toMatchObject({ outcome: 'recorded' });
    expect((r.body as { at: number }).at).toBeLessThanOrEqual(Date.now());
  });

  it('keeps a spend’s token rules and checks its fields', async () => {
    const denied = await record(elsewhere, {
      credential: 'default',
      bucket: 'units',
      entry: 'late-6',
      at: Date.now(),
    });
    expect(denied.status).toBe(403);
    const manual = await record(job, {
      credential: 'default',
      bucket: 'units',
      tier: 'manual',
      entry: 'late-7',
      at: Date.now(),
    });
    expect(manual.status).toBe(403);
    for (const [body, field] of [
      [{ credential: 'default', bucket: 'units', entry: 'late-8' }, 'at'],
      [{ credential: 'default', bucket: 'units', at: Date.now() }, 'entry'],
      [{ credential: 'default', bucket: 'units', entry: 'late-9', at: 'yesterday' }, 'at'],
      [
        { credential: 'default', bucket: 'units', entry: 'late-9', at: Date.now(), allowUnknown: true },
        'allowUnknown',
      ],
    ] as const) {
      const r = await record(job, body);
      expect(r.status, field).toBe(400);
      expect(r.body).toMatchObject({ error: { code: 'QG_INVALID_ARGUMENT', field } });
    }
  });
});

describe('POST /v1/void', () => {
  it('takes an allowed entry back, once', async () => {
    await job.spend({ credential: 'default', bucket: 'units', cost: 2, tag: 'unused', entry: 'void-1' });
    expect(await used('job:unused')).toBe(2);
    expect((await voidIt(job, { credential: 'default', entry: 'void-1' })).body).toEqual({
      entry: 'void-1',
      outcome: 'refunded',
    });
    expect(await used('job:unused')).toBe(0);
    expect((await voidIt(job, { credential: 'default', entry: 'void-1' })).body).toMatchObject({
      outcome: 'none',
    });
  });

  it('keeps an entry never spent from ever landing: its spend arriving later charges nothing', async () => {
    expect((await voidIt(job, { credential: 'default', entry: 'void-2' })).body).toMatchObject({
      outcome: 'voided',
    });
    const late = await job.spend({
      credential: 'default',
      bucket: 'units',
      tag: 'late-arrival',
      entry: 'void-2',
      allowUnknown: true,
    });
    expect(late.body).toMatchObject({ allowed: false, reason: 'void', replayed: true, retryAfterMs: 0 });
    expect(await used('job:late-arrival')).toBe(0);
    expect((await voidIt(job, { credential: 'default', entry: 'void-2' })).body).toMatchObject({
      outcome: 'none',
    });
  });

  it('does not touch another token’s entry, nor a credential the token may not use', async () => {
    await job.spend({ credential: 'default', bucket: 'units', tag: 'mine', entry: 'void-3' });
    const theirs = await voidIt(other, { credential: 'default', entry: 'void-3' });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toMatchObject({ error: { code: 'QG_ENTRY_UNKNOWN' } });
    expect((await voidIt(elsewhere, { credential: 'default', entry: 'void-4' })).status).toBe(403);
    expect(await used('job:mine')).toBe(1);
  });

  it('counts records and voids in the request metrics by outcome', async () => {
    const metrics = await (await fetch(`${served.url}/metrics`)).text();
    expect(metrics).toMatch(
      /quota_guard_api_requests_total\{[^}]*route="record"[^}]*outcome="recorded"[^}]*client="job"[^}]*\} [1-9]/,
    );
    expect(metrics).toMatch(
      /quota_guard_api_requests_total\{[^}]*route="void"[^}]*outcome="voided"[^}]*\} 1\n/,
    );
  });
});
