import { request } from 'undici';
import { afterEach } from 'vitest';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/youtube/simulator/index.js';
import {
  createYouTubeClient,
  UpstreamError,
  type YouTubeClient,
  type YouTubeClientOptions,
} from '../../src/youtube/upstream/index.js';

/** Raw JSON of an API answer; tests read into it freely. */
// biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON answers, asserted field by field
export type Json = any;

export const KEY = 'sim-test-key';

/** A fixed instant in PST, so tests do not depend on the host clock. */
export const JAN_15 = Date.parse('2026-01-15T20:00:00Z');

/** One raw GET against the simulator's API (no client in between): status, headers and JSON body. */
export async function get(
  sim: Simulator,
  path: string,
  params: Record<string, string | undefined>,
): Promise<{ status: number; headers: Record<string, unknown>; body: Json }> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  const res = await request(`${sim.url}${path}?${q}`);
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** Walks a chart to its end and returns every page's items. */
export async function walkChart(
  sim: Simulator,
  params: Record<string, string | undefined>,
  key = KEY,
): Promise<{ pages: Json[]; ids: string[] }> {
  const pages: Json[] = [];
  let pageToken: string | undefined = params.pageToken;
  do {
    const r = await get(sim, '/videos', {
      part: 'snippet,contentDetails,statistics',
      chart: 'mostPopular',
      maxResults: '50',
      key,
      ...params,
      pageToken,
    });
    if (r.status !== 200) throw new Error(`chart page answered ${r.status}: ${JSON.stringify(r.body)}`);
    pages.push(r.body);
    pageToken = r.body.nextPageToken;
    if (pages.length > 100) throw new Error('pagination does not end');
  } while (pageToken);
  return { pages, ids: pages.flatMap((p) => p.items.map((v: { id: string }) => v.id)) };
}

/** A starter of simulators, each with a client on KEY, all closed after each test. */
export function useSimulators(defaults: SimulatorOptions = {}) {
  const open: Array<{ sim: Simulator; client: YouTubeClient }> = [];
  afterEach(async () => {
    for (const { sim, client } of open.splice(0)) {
      await client.close();
      await sim.close();
    }
  });
  return async (options: SimulatorOptions = {}, clientOptions: Partial<YouTubeClientOptions> = {}) => {
    const sim = await startSimulator({ ...defaults, ...options });
    const client = createYouTubeClient({ baseUrl: sim.url, apiKey: KEY, ...clientOptions });
    open.push({ sim, client });
    return { sim, client };
  };
}

/** 'ok', the error code, or `transport:<reached>` for a transport failure. */
export async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    if (!(e instanceof UpstreamError)) throw e;
    return e.code === 'QG_UPSTREAM_TRANSPORT' ? `transport:${e.reached}` : e.code;
  }
}
