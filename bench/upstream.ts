/**
 * Upstream section of `npm run bench`: how fast the simulator answers the client over loopback,
 * with the simulator in its own process (`quota-guard simulate`, as the drill runs it), and the
 * client's kept-alive pool side by side with a new connection per request.
 *
 * Environment (defaults in brackets):
 *   QG_BENCH_UPSTREAM_MS [3000]   measuring time per scenario
 */
import { once } from 'node:events';
import { Pool } from 'undici';
import { simulatorControl } from '../src/youtube/simulator/index.js';
import {
  createYouTubeClient,
  VideoListResponseSchema,
  type YouTubeClient,
} from '../src/youtube/upstream/index.js';
import { KEY, startSimulatorProcess } from './simulator.js';

const DURATION = Number(process.env.QG_BENCH_UPSTREAM_MS || 3_000);

function pct(sorted: number[], p: number): number {
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
  );
}

interface Result {
  name: string;
  perSec: number;
  p50: number;
  p99: number;
}

/** Runs `call` from `concurrency` loops for DURATION ms (after a short warm-up). */
async function measure(name: string, concurrency: number, call: () => Promise<unknown>): Promise<Result> {
  const warmEnd = performance.now() + 300;
  while (performance.now() < warmEnd) await call();
  const lat: number[] = [];
  const start = performance.now();
  const end = start + DURATION;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        await call();
        lat.push(performance.now() - t);
      }
    }),
  );
  const elapsed = performance.now() - start;
  lat.sort((a, b) => a - b);
  return { name, perSec: lat.length / (elapsed / 1000), p50: pct(lat, 50), p99: pct(lat, 99) };
}

/** Mean ms per call of `fn`, run for `ms` ms after a short warm-up (synchronous work only). */
function msPerCall(fn: () => unknown, ms = 500): number {
  const warmEnd = performance.now() + 100;
  while (performance.now() < warmEnd) fn();
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < ms) {
    fn();
    n++;
  }
  return (performance.now() - start) / n;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (x: number) => (x >= 10 ? x.toFixed(1) : x.toFixed(2));

export async function run(): Promise<void> {
  const { url, child } = await startSimulatorProcess(['--bucket', 'search.list=1000000000']);
  const clients: YouTubeClient[] = [];
  const client = (connections: number) => {
    const c = createYouTubeClient({ baseUrl: url, apiKey: KEY, connections });
    clients.push(c);
    return c;
  };
  try {
    const one = client(1);
    const many = client(16);
    const chartTokens: string[] = [];
    let t: string | undefined;
    do {
      const page = await one.videosListChart({ regionCode: 'US', ...(t ? { pageToken: t } : {}) });
      t = page.nextPageToken;
      if (t) chartTokens.push(t);
    } while (t);
    let i = 0;
    const chartPage = (c: YouTubeClient) => async () => {
      const token = chartTokens[i++ % (chartTokens.length + 1)];
      return c.videosListChart({ regionCode: 'US', ...(token ? { pageToken: token } : {}) });
    };
    const small = (c: YouTubeClient) => () => c.videoCategoriesList({ regionCode: 'US' });
    const fresh = async () => {
      const c = createYouTubeClient({ baseUrl: url, apiKey: KEY, connections: 1 });
      try {
        return await c.videoCategoriesList({ regionCode: 'US' });
      } finally {
        await c.close();
      }
    };

    // The same pages over a bare undici Pool: what the simulator and the transport cost without
    // the client's JSON parsing and schema validation.
    const raw = new Pool(new URL(url).origin, { connections: 16 });
    const rawPath = (token?: string) =>
      `/youtube/v3/videos?part=snippet,contentDetails,statistics&chart=mostPopular&regionCode=US&maxResults=50&key=${KEY}${token ? `&pageToken=${token}` : ''}`;
    const rawPage = async () => {
      const res = await raw.request({
        method: 'GET',
        path: rawPath(chartTokens[i++ % (chartTokens.length + 1)]),
      });
      await res.body.arrayBuffer();
    };

    const results: Result[] = [];
    results.push(await measure('videoCategories.list, 1 in flight, kept-alive pool', 1, small(one)));
    results.push(await measure('videoCategories.list, 1 in flight, new connection each', 1, fresh));
    results.push(await measure('videoCategories.list, 16 in flight, 16 connections', 16, small(many)));
    results.push(await measure('videos.list chart page (50 videos), 1 in flight', 1, chartPage(one)));
    results.push(await measure('videos.list chart page (50 videos), 16 in flight', 16, chartPage(many)));
    results.push(await measure('same pages, bare undici Pool (no parsing), 16 in flight', 16, rawPage));
    // The client's own work on one full chart page, without any I/O.
    const fullPage = await raw.request({ method: 'GET', path: rawPath() });
    const text = await fullPage.body.text();
    const parsed = JSON.parse(text);
    const parseMs = msPerCall(() => JSON.parse(text));
    const validateMs = msPerCall(() => VideoListResponseSchema.parse(parsed));
    await raw.close();

    const stats = await simulatorControl(url).stats();
    console.log(`simulator in its own process; client: undici Pool; ${DURATION} ms per row\n`);
    console.log('| scenario | requests/s | p50 ms | p99 ms |');
    console.log('|---|---:|---:|---:|');
    for (const r of results) console.log(`| ${r.name} | ${fmt(r.perSec)} | ${ms(r.p50)} | ${ms(r.p99)} |`);
    const [kept, freshR] = results;
    console.log(
      `\nkept-alive vs new connection per request (sequential): ${(kept!.perSec / freshR!.perSec).toFixed(1)}× the requests/s`,
    );
    console.log(
      `client work per full chart page (${(Buffer.byteLength(text) / 1000).toFixed(0)} KB): ` +
        `JSON.parse ${ms(parseMs)} ms, zod validation ${ms(validateMs)} ms`,
    );
    console.log(
      `simulator accepted ${fmt(stats.sockets.accepted)} connections for ${fmt(stats.requests.total)} requests`,
    );
  } finally {
    for (const c of clients) await c.close();
    child.kill('SIGINT');
    await once(child, 'exit');
  }
}
