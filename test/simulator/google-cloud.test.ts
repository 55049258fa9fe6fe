/**
 * The simulator's Google Cloud routes answer in the shapes recorded in test/fixtures/monitoring/:
 * the same fields, the same kinds of values (int64 as strings), points newest first, page tokens;
 * and its token endpoint and metadata server give tokens only as the real ones do.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/monitoring');
const recorded = (name: string) =>
  JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as Record<string, unknown>;
const T0 = Date.UTC(2026, 0, 15, 18, 0, 0);

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await request(`${sim!.origin}${path}`, { headers });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

/** An object's keys, and its nested objects' keys, as dotted paths (array items by their first). */
function shape(v: unknown, at = ''): string[] {
  if (Array.isArray(v)) return v.length ? shape(v[0], `${at}[]`) : [`${at}[]`];
  if (typeof v !== 'object' || v === null) return [`${at}:${typeof v}`];
  return Object.entries(v).flatMap(([k, x]) => shape(x, at ? `${at}.${k}` : k));
}

describe("the simulator's Google Cloud routes", () => {
  it('answers timeSeries.list in the recorded shape, newest point first, a page at a time', async () => {
    let now = T0;
    sim = await startSimulator({ keys: ['k@alpha'], now: () => now });
    for (let i = 0; i < 3; i++) {
      now = T0 + i * 60_000 + 1_000;
      sim.spendBehind('alpha', 'units', i + 1);
    }
    now = T0 + 20 * 60_000;
    const auth = { authorization: `Bearer ${sim.monitoring.token()}` };
    const q = new URLSearchParams({
      filter:
        'metric.type = "serviceruntime.googleapis.com/quota/rate/net_usage" AND resource.labels.service = "youtube.googleapis.com"',
      'interval.startTime': new Date(T0).toISOString(),
      'interval.endTime': new Date(now).toISOString(),
      pageSize: '2',
    });
    const first = await get(`/v3/projects/alpha/timeSeries?${q}`, auth);
    expect(first.status).toBe(200);
    const body = JSON.parse(first.text) as {
      timeSeries: Array<{ points: Array<{ interval: { endTime: string }; value: { int64Value: unknown } }> }>;
      nextPageToken?: string;
    };
    const series = body.timeSeries[0]!;
    const model = (recorded('200-timeSeries-net-usage-page1.json').timeSeries as unknown[])[0];
    expect(shape(series).sort()).toEqual(shape(model).sort());
    expect(series.points.map((p) => p.value.int64Value)).toEqual(['3', '2']);
    expect(Date.parse(series.points[0]!.interval.endTime)).toBeGreaterThan(
      Date.parse(series.points[1]!.interval.endTime),
    );
    q.set('pageToken', body.nextPageToken!);
    const second = JSON.parse((await get(`/v3/projects/alpha/timeSeries?${q}`, auth)).text) as typeof body;
    expect(second.timeSeries[0]!.points.map((p) => p.value.int64Value)).toEqual(['1']);
    expect(second.nextPageToken).toBeUndefined();
    q.set('pageToken', 'not-a-token');
    expect((await get(`/v3/projects/alpha/timeSeries?${q}`, auth)).status).toBe(400);
  });

  it('answers quotaInfos with each daily limit as an int64 string', async () => {
    sim = await startSimulator({ keys: ['k@alpha'], buckets: { 'search.list': 150 } });
    const auth = { authorization: `Bearer ${sim.monitoring.token()}` };
    const r = await get(
      '/v1/projects/alpha/locations/global/services/youtube.googleapis.com/quotaInfos',
      auth,
    );
    expect(r.status).toBe(200);
    const infos = (JSON.parse(r.text) as { quotaInfos: Array<Record<string, unknown>> }).quotaInfos;
    const model = (recorded('200-quotaInfos-youtube.json').quotaInfos as unknown[])[0];
    expect(shape(infos[0]).sort()).toEqual(shape(model).sort());
    const limit = (metric: string) =>
      (infos.find((i) => i.metric === metric)?.dimensionsInfos as Array<{ details: { value: unknown } }>)[0]!
        .details.value;
    expect(limit('youtube.googleapis.com/default')).toBe('10000');
    expect(limit('youtube.googleapis.com/search_list')).toBe('150');
  });

  it('gives tokens to a grant or a metadata request, and answers reads without one 401', async () => {
    sim = await startSimulator({ keys: ['k@alpha'] });
    const path =
      '/v3/projects/alpha/timeSeries?filter=metric.type%20%3D%20%22x%22&interval.endTime=2026-01-01T00:00:00Z';
    const none = await get(path);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.text)).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });

    const grant = await request(`${sim.origin}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=a.b.c',
    });
    const token = (await grant.body.json()) as {
      access_token: string;
      expires_in: number;
      token_type: string;
    };
    expect(grant.statusCode).toBe(200);
    expect(token).toMatchObject({ token_type: 'Bearer', expires_in: 3599 });
    expect((await get(path, { authorization: `Bearer ${token.access_token}` })).status).toBe(200);

    const md = '/computeMetadata/v1/instance/service-accounts/default/token';
    expect((await get(md)).status).toBe(403);
    const fromMetadata = await get(md, { 'metadata-flavor': 'Google' });
    expect(fromMetadata.status).toBe(200);
    expect(fromMetadata.headers['metadata-flavor']).toBe('Google');
    const t = (JSON.parse(fromMetadata.text) as { access_token: string }).access_token;
    expect((await get(path, { authorization: `Bearer ${t}` })).status).toBe(200);
  });
});
