/**
 * `run --http … --decisions`: the scheduler's server answers the decision API beside /metrics,
 * and the decisions show in its metrics by route, outcome and client.
 */
import { expect, it } from 'vitest';
import { openQuotaGuard } from '../../src/quota-guard.js';
import { startService, type TickSource } from '../../src/scheduler/index.js';
import { parseYouTubeConfig as parseConfig } from '../../src/youtube/config/part.js';
import { KEY_ENV, secretKey, tmpPath } from '../job-library/helpers.js';
import { sample, scrape } from '../metrics/helpers.js';
import { ApiClient } from './helpers.js';

const noTicks: TickSource = { schedule: () => ({ stop() {} }) };

it('serves /v1/spend beside /metrics, and counts it by route, outcome and client', async () => {
  const store = `sqlite:${tmpPath('ledger.db')}`;
  const config = parseConfig(
    { store, cache: { path: tmpPath('cache.db') }, credentials: [{ id: 'default', apiKeyEnv: KEY_ENV }] },
    { env: { [KEY_ENV]: secretKey() } },
  );
  const silent = { info() {}, warn() {}, debug() {}, error() {}, child: () => silent };
  const service = await startService({
    qg: await openQuotaGuard(config, { logger: silent }),
    ticks: noTicks,
    backfill: false,
    http: { host: '127.0.0.1', port: 0 },
    decisions: {},
  });
  const client = new ApiClient(service.server!.url);
  try {
    const r = await client.spend({ credential: 'default', method: 'videos.list', entry: 'svc-1' });
    expect(r.body).toMatchObject({ allowed: true, tag: 'local:videos.list' });
    await client.spend({ credential: 'default', method: 'videos.list', entry: 'svc-1' });
    const f = await scrape(service.server!.url);
    expect(
      sample(f, 'quota_guard_api_requests_total', { route: 'spend', outcome: 'allowed', client: 'local' }),
    ).toBe(1);
    expect(
      sample(f, 'quota_guard_api_requests_total', { route: 'spend', outcome: 'replayed', client: 'local' }),
    ).toBe(1);
    expect(sample(f, 'quota_guard_ledger_decisions_total', { bucket: 'units', outcome: 'allowed' })).toBe(1);
  } finally {
    await client.close();
    await service.stop('test');
  }
});
