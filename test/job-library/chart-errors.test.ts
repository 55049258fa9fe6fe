/**
 * Region errors in a trending run, against a loopback upstream: `videoChartNotFound` on the first
 * page is a region without a chart (that region stops with 78, the others run); the same error on
 * page 2, after a good page 1, keeps page 1 and reports the region as partly fetched, not
 * unsupported.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { runTrending } from '../../src/youtube/job-library/index.js';
import { httpServer, json, type Running } from '../upstream/helpers.js';
import { rig } from './helpers.js';

const servers: Running[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

const chartNotFound = {
  error: {
    code: 400,
    message: 'The requested video chart is not supported or is not available.',
    errors: [
      {
        message: 'The requested video chart is not supported or is not available.',
        domain: 'youtube.video',
        reason: 'videoChartNotFound',
        location: 'chart',
        locationType: 'parameter',
      },
    ],
  },
};

function page(prefix: string, next?: string) {
  return {
    kind: 'youtube#videoListResponse',
    items: Array.from({ length: 50 }, (_, i) => ({
      kind: 'youtube#video',
      id: `${prefix}${String(i).padStart(9, '0')}`,
      snippet: { title: `video ${prefix} ${i}`, publishedAt: '2026-11-20T10:00:00Z' },
    })),
    ...(next ? { nextPageToken: next } : {}),
    pageInfo: { totalResults: 200, resultsPerPage: 50 },
  };
}

/** US: page 1 good, page 2 refused; GB: good, one page; AQ: no chart at all. */
async function upstream(): Promise<Running> {
  const srv = await httpServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    const region = q.get('regionCode');
    if (region === 'AQ') return json(res, 400, chartNotFound);
    if (region === 'GB') return json(res, 200, page('gb'));
    if (q.get('pageToken')) return json(res, 400, chartNotFound);
    return json(res, 200, page('us', 'P2'));
  });
  servers.push(srv);
  return srv;
}

describe('region errors of a trending run', () => {
  it('videoChartNotFound on page 1: that region stops (78) naming it, the others run', async () => {
    const srv = await upstream();
    const r = await rig({ config: { regions: ['US', 'GB', 'AQ'], upstream: { baseUrl: srv.url } } });
    try {
      const bad = await runTrending(r, { region: 'AQ' });
      expect(bad).toMatchObject({
        outcome: 'failed',
        exitCode: 78,
        errorCode: 'QG_UPSTREAM_REGION_UNSUPPORTED',
        pages: 0,
      });
      expect(bad.reason).toContain('no trending chart for AQ');
      expect(bad.reason).toContain('videoChartNotFound');
      expect(await runTrending(r, { region: 'GB' })).toMatchObject({ outcome: 'done', pages: 1 });
    } finally {
      await r.close();
    }
  });

  it('a region error on page 2 keeps page 1 and reports the region partly fetched', async () => {
    const srv = await upstream();
    const r = await rig({ config: { regions: ['US'], upstream: { baseUrl: srv.url } } });
    try {
      const us = await runTrending(r, { region: 'US' });
      expect(us.outcome).toBe('unavailable');
      expect(us.exitCode).toBe(69);
      expect(us.errorCode).toBeUndefined();
      expect(us).toMatchObject({ pages: 1, videos: 50, units: 2 });
      expect(us.reason).toMatch(/^partly fetched: US: page 2 was refused after 1 page written \(kept\)/);
      expect(r.cache.latestSnapshot('US')?.videos).toHaveLength(50);
    } finally {
      await r.close();
    }
  });
});
