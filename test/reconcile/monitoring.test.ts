/**
 * The Cloud Monitoring reader against the simulator's `timeSeries.list` (real HTTP on loopback, the
 * simulator's clock set by the test) and against the answers kept in test/fixtures/monitoring/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { isQuotaGuardError } from '../../src/errors.js';
import { staticTokens } from '../../src/reconcile/google-auth.js';
import { cloudMonitoringSource, parseListTimeSeries } from '../../src/reconcile/google-monitoring.js';
import type { CountQuery, UpstreamCountSource } from '../../src/reconcile/source.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { failure, httpServer, type Running } from '../upstream/helpers.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/monitoring');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

const MIN = 60_000;
/** 10:00 in Los Angeles on a winter day: the upstream's day began at 08:00 UTC. */
const T0 = Date.UTC(2026, 0, 15, 18, 0, 0);
const DAY_START = Date.UTC(2026, 0, 15, 8, 0, 0);
const UNITS = { bucket: 'units', metric: 'youtube.googleapis.com/default' };
const SEARCH = { bucket: 'search.list', metric: 'youtube.googleapis.com/search_list' };

let sim: Simulator | undefined;
let server: Running | undefined;
const sources: UpstreamCountSource[] = [];

afterEach(async () => {
  for (const s of sources.splice(0)) await s.close();
  await sim?.close();
  await server?.close();
  sim = undefined;
  server = undefined;
});

async function world() {
  let now = T0;
  sim = await startSimulator({ keys: ['k1@alpha'], now: () => now });
  const s = sim;
  const at = (ms: number) => {
    now = ms;
  };
  const call = async (path: string) => {
    const res = await request(`${s.url}${path}&key=k1`);
    await res.body.dump();
    return res.statusCode;
  };
  return { sim: s, at, call };
}

function source(
  base: string,
  token: string,
  extra: Partial<Parameters<typeof cloudMonitoringSource>[0]> = {},
) {
  const src = cloudMonitoringSource({ baseUrl: base, tokens: staticTokens(token), ...extra });
  sources.push(src);
  return src;
}

function query(toMs: number, project = 'alpha'): CountQuery {
  return { project, quotas: [UNITS, SEARCH], fromMs: DAY_START, toMs, minuteMs: MIN };
}

/** The minute of the upstream's day an instant falls in. */
const minute = (ms: number) => Math.floor((ms - DAY_START) / MIN);

describe('the Cloud Monitoring reader against the simulator', () => {
  it('counts each unit in the minute it was charged, and no minute still within the delay', async () => {
    const w = await world();
    w.at(T0 + 30_000);
    w.sim.spendBehind('alpha', 'units', 30);
    w.at(T0 + MIN + 59_000);
    expect(await w.call('/videos?part=snippet&chart=mostPopular&regionCode=US')).toBe(200);
    expect(await w.call('/videos?part=snippet&chart=mostPopular&regionCode=GB')).toBe(200);
    expect(await w.call('/search?part=snippet&q=cats')).toBe(200);
    w.at(T0 + 5 * MIN + 10_000);
    w.sim.spendBehind('alpha', 'units', 5);

    // Four minutes of delay: at 18:08 the minutes up to 18:03 show, 18:05 does not yet.
    w.at(T0 + 8 * MIN);
    const src = source(w.sim.origin, w.sim.monitoring.token());
    const early = await src.count(query(T0 + 8 * MIN));
    expect(early.perMinute.units).toHaveLength(minute(T0 + 8 * MIN));
    expect(early.perMinute.units![minute(T0)]).toBe(30);
    expect(early.perMinute.units![minute(T0 + MIN)]).toBe(2);
    expect(early.perMinute['search.list']![minute(T0 + MIN)]).toBe(1);
    expect(early.perMinute.units![minute(T0 + 5 * MIN)]).toBe(0);
    expect(early.reads).toBe(1);

    // Later the point for 18:05 is there, at its own minute: a late point is still seen.
    w.at(T0 + 10 * MIN);
    const later = await src.count(query(T0 + 10 * MIN));
    expect(later.perMinute.units![minute(T0 + 5 * MIN)]).toBe(5);
    expect(later.perMinute.units!.reduce((a, b) => a + b, 0)).toBe(w.sim.usage('alpha', 'units').used);
  });

  it('follows page tokens to the same counts', async () => {
    const w = await world();
    for (let i = 0; i < 6; i++) {
      w.at(T0 + i * MIN + 1_000);
      w.sim.spendBehind('alpha', 'units', i + 1);
    }
    w.at(T0 + 20 * MIN);
    const src = source(w.sim.origin, w.sim.monitoring.token());
    const whole = await src.count(query(T0 + 20 * MIN));
    w.sim.monitoring.setFaults({ pageSize: 2 });
    const paged = await src.count(query(T0 + 20 * MIN));
    expect(paged.perMinute).toEqual(whole.perMinute);
    expect(whole.reads).toBe(1);
    expect(paged.reads).toBe(3);
  });

  it('says in one line what a 401, a 403 and a 404 mean', async () => {
    const w = await world();
    w.sim.spendBehind('alpha', 'units', 1);
    const unknown = await failure(source(w.sim.origin, 'not-a-token').count(query(T0)));
    expect(isQuotaGuardError(unknown) && unknown.code).toBe('QG_RECONCILE_AUTH');

    const src = source(w.sim.origin, w.sim.monitoring.token());
    w.sim.monitoring.setFaults({ forbidden: true });
    const denied = await failure(src.count(query(T0)));
    expect(isQuotaGuardError(denied) && denied.code).toBe('QG_RECONCILE_FORBIDDEN');
    expect((denied as Error).message).toMatch(/^alpha: .*403 PERMISSION_DENIED.*roles\/monitoring\.viewer/);
    expect((denied as Error).message).not.toMatch(/\n/);

    w.sim.monitoring.clearFaults();
    const noProject = await failure(src.count(query(T0, 'no-such-project')));
    expect(isQuotaGuardError(noProject) && noProject.code).toBe('QG_RECONCILE_PROJECT');
    expect((noProject as Error).message).toContain("'no-such-project'");
  });

  it('gives up on a slow answer at its deadline, and on a body cut short', async () => {
    const w = await world();
    w.sim.spendBehind('alpha', 'units', 1);
    w.sim.monitoring.setFaults({ latencyMs: 5_000 });
    const slow = await failure(
      source(w.sim.origin, w.sim.monitoring.token(), { deadlineMs: 300 }).count(query(T0)),
    );
    expect(isQuotaGuardError(slow) && slow.code).toBe('QG_UPSTREAM_DEADLINE');

    w.sim.monitoring.setFaults({ latencyMs: 0, truncate: true });
    const cut = await failure(source(w.sim.origin, w.sim.monitoring.token()).count(query(T0)));
    expect(isQuotaGuardError(cut) && ['QG_UPSTREAM_TRANSPORT', 'QG_UPSTREAM_BAD_RESPONSE']).toContain(
      isQuotaGuardError(cut) ? cut.code : undefined,
    );
  });

  it('never puts the token in an error', async () => {
    const w = await world();
    const token = w.sim.monitoring.token();
    w.sim.monitoring.setFaults({ forbidden: true });
    const denied = await failure(source(w.sim.origin, token).count(query(T0)));
    expect(
      JSON.stringify({ m: (denied as Error).message, d: (denied as { details?: unknown }).details }),
    ).not.toContain(token);
  });
});

describe('the Cloud Monitoring reader against recorded answers', () => {
  it('reads every kept answer or refuses it whole', () => {
    const outcomes = Object.fromEntries(
      readdirSync(FIXTURES)
        .filter((f) => f.startsWith('200-timeSeries'))
        .map((f) => {
          try {
            parseListTimeSeries(fixture(f), 'p');
            return [f, 'read'];
          } catch (e) {
            return [f, isQuotaGuardError(e) ? e.code : 'thrown'];
          }
        }),
    );
    expect(outcomes).toEqual({
      '200-timeSeries-net-usage-page1.json': 'read',
      '200-timeSeries-net-usage-page2.json': 'read',
      // Incomplete by its own word: nothing is counted from it.
      '200-timeSeries-net-usage-partial.json': 'QG_UPSTREAM_BAD_RESPONSE',
      // Not quota usage: no quota_metric label, a BOOL gauge.
      '200-timeSeries-quota-exceeded.json': 'QG_UPSTREAM_BAD_RESPONSE',
      '200-timeSeries-request-count.json': 'QG_UPSTREAM_BAD_RESPONSE',
    });
  });

  it('sums two recorded pages per quota metric and minute, asking for the second by its token', async () => {
    const paths: string[] = [];
    server = await httpServer((req, res) => {
      paths.push(req.url ?? '');
      const name = (req.url ?? '').includes('pageToken=')
        ? '200-timeSeries-net-usage-page2.json'
        : '200-timeSeries-net-usage-page1.json';
      const body = fixture(name);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    const from = Date.UTC(2026, 0, 15, 16, 0);
    const src = source(`http://127.0.0.1:${server.port}`, 'token');
    const got = await src.count({
      project: 'example-project',
      quotas: [UNITS, SEARCH],
      fromMs: from,
      toMs: from + 5 * MIN,
      minuteMs: MIN,
    });
    expect(got.perMinute).toEqual({ units: [7, 50, 0, 3, 0], 'search.list': [0, 0, 2, 0, 0] });
    expect(got.reads).toBe(2);
    expect(paths[1]).toContain('pageToken=CgwI4r2WsQYQgJ7Nvg');
    const first = new URL(paths[0]!, 'http://x');
    expect(first.pathname).toBe('/v3/projects/example-project/timeSeries');
    expect(first.searchParams.get('filter')).toBe(
      'metric.type = "serviceruntime.googleapis.com/quota/rate/net_usage" AND resource.type = "consumer_quota" AND resource.labels.service = "youtube.googleapis.com"',
    );
    expect(first.searchParams.get('interval.startTime')).toBe('2026-01-15T16:00:00.000Z');
  });

  it('takes a recorded 403 as a missing role', async () => {
    server = await httpServer((_req, res) => {
      const body = fixture('403-permission-denied.json');
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(body);
    });
    const e = await failure(source(`http://127.0.0.1:${server.port}`, 't').count(query(T0, 'p')));
    expect(isQuotaGuardError(e) && e.code).toBe('QG_RECONCILE_FORBIDDEN');
    expect((e as Error).message).toContain('Permission monitoring.metricDescriptors.create denied');
  });
});
