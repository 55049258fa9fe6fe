/**
 * A spend whose store command may still run is "unknown" to a caller that takes it
 * (`allowUnknown`), and `store-down` to one that does not: `serve --decisions` over a private Redis
 * paused with SIGSTOP, so the script is sent and its answer never comes in time.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisServer, redisServers } from '../harness/redis.js';
import { ApiClient, type Served, startServe, writeConfig } from './helpers.js';

const servers = redisServers();
let redis: RedisServer;
let served: Served;
let client: ApiClient;

beforeAll(async () => {
  redis = await servers.start();
  served = await startServe(writeConfig({ store: redis.url, credentials: [{ id: 'default' }] }));
  client = new ApiClient(served.url);
});

afterAll(async () => {
  await client?.close();
  await served?.stop();
  await servers.stopAll();
});

it('answers unknown to a caller that takes it when the store may still apply the spend, store-down otherwise', async () => {
  // The first spend loads the script; the store answers.
  const first = await client.spend({
    credential: 'default',
    bucket: 'units',
    entry: 'u-0',
    allowUnknown: true,
  });
  expect(first.body).toMatchObject({ allowed: true, reason: 'allowed' });
  redis.proc.kill('SIGSTOP');
  try {
    const unknown = await client.spend({
      credential: 'default',
      bucket: 'units',
      entry: 'u-1',
      allowUnknown: true,
    });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ allowed: false, reason: 'unknown', entry: 'u-1' });
    const old = await client.spend({ credential: 'default', bucket: 'units', entry: 'u-2' });
    expect(old.body).toMatchObject({ allowed: false, reason: 'store-down', entry: 'u-2' });
    const refused = await client.spend({ credential: 'default', bucket: 'units', allowUnknown: 'yes' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { code: 'QG_INVALID_ARGUMENT', field: 'allowUnknown' } });
  } finally {
    redis.proc.kill('SIGCONT');
  }
  const metrics = await (await fetch(`${served.url}/metrics`)).text();
  expect(metrics).toMatch(
    /quota_guard_api_requests_total\{[^}]*route="spend"[^}]*outcome="unknown"[^}]*\} 1\n/,
  );
});
