/**
 * Several instances, one budget: two `serve --decisions` processes over one Redis answer as one.
 * The ceiling holds across both, and an entry spent through one is answered by the other.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { openRedisHistory } from '../../src/history/redis.js';
import { ApiClient, type Served, startServe, writeConfig } from './helpers.js';

const cred = `in${randomBytes(4).toString('hex')}`;
let a: Served;
let b: Served;
const clients: ApiClient[] = [];

beforeAll(async () => {
  const config = writeConfig({
    store: inject('redisUrl'),
    credentials: [{ id: cred, apiKeyEnv: 'QG_INSTANCES_TEST_KEY', buckets: { units: { quota: 100 } } }],
  });
  [a, b] = await Promise.all([startServe(config), startServe(config)]);
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await Promise.all([a?.stop(), b?.stop()]);
});

it('two instances over one Redis keep one ceiling and remember each other’s entries', async () => {
  const pool = Array.from({ length: 8 }, (_v, i) => new ApiClient(i % 2 ? a.url : b.url));
  clients.push(...pool);
  const answers = await Promise.all(
    Array.from({ length: 200 }, (_v, i) =>
      pool[i % pool.length]!.spend({ credential: cred, bucket: 'units', cost: 1, entry: `race-${i}` }),
    ),
  );
  const allowed = answers.filter((r) => (r.body as { allowed: boolean }).allowed).length;
  expect(allowed).toBe(95); // the scheduled ceiling: 100 less the 5% reserve

  // Spent through one, sent again to the other: its first decision, nothing charged.
  const first = answers[1]!.body as { allowed: boolean; at: number };
  const viaOther = await pool[0]!.spend({ credential: cred, bucket: 'units', cost: 1, entry: 'race-1' });
  expect(viaOther.body).toMatchObject({ replayed: true, allowed: first.allowed, at: first.at });
  const conflict = await pool[0]!.spend({ credential: cred, bucket: 'units', cost: 2, entry: 'race-1' });
  expect(conflict.status).toBe(409);
  const status = await pool[1]!.call('GET', `/v1/status?credential=${cred}`);
  const units = (
    status.body as { credentials: Array<{ buckets: Array<{ id: string; used: number }> }> }
  ).credentials[0]!.buckets.find((x) => x.id === 'units');
  expect(units?.used).toBe(95);
});

it('a run recorded through one instance is answered by the other as recorded, and recorded once', async () => {
  const [viaA, viaB] = [new ApiClient(a.url), new ApiClient(b.url)];
  clients.push(viaA, viaB);
  const now = Date.now();
  const run = {
    credential: cred,
    id: 'both-1',
    job: 'ingest:x',
    startedAt: now - 5_000,
    finishedAt: now,
    outcome: 'done',
  };
  const first = await viaA.call('POST', '/v1/runs', run);
  expect(first.body).toMatchObject({ replayed: false, client: 'local', units: 0 });
  const second = await viaB.call('POST', '/v1/runs', run);
  expect(second.body).toEqual({ ...(first.body as object), replayed: true });
  expect((await viaB.call('POST', '/v1/runs', { ...run, outcome: 'failed' })).status).toBe(409);
  const history = await openRedisHistory('redis', inject('redisUrl'), {});
  try {
    expect((await history.list({ credentials: [cred] })).map((r) => r.job)).toEqual(['ingest:x']);
  } finally {
    await history.close();
  }
});
