/**
 * `npm run bench -- serve-memory`: a soak of `quota-guard serve`. A simulator and three cron-style
 * `fetch` runs fill a SQLite ledger and its run history; then `serve` runs as its own process (the
 * built CLI, `dist/cli/bin.js`: run `npm run build` first) and rounds of 10,000 requests arrive,
 * 1,000 at a time (the status page, `/metrics` and `/healthz`, 8:1:1). Between rounds the process
 * idles. Its RSS is read from /proc/<pid>/status: after start, at its highest during each round,
 * after each round and after each idle. If the memory a round takes were kept (a leak), every
 * round would end higher than the last; bounded, the rounds end level.
 *
 * `BENCH_SERVE_BIN=<other checkout>/dist/cli/bin.js` runs another build instead (an older commit).
 * `BENCH_SERVE_ROUNDS` (default 3), `BENCH_SERVE_REQUESTS` (10000), `BENCH_SERVE_CONCURRENCY` (1000).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { main as cliMain } from '../src/cli/main.js';
import { startSimulator } from '../src/youtube/simulator/index.js';
import { listening, rssMb } from './serve-process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = process.env['BENCH_SERVE_BIN'] ?? join(ROOT, 'dist/cli/bin.js');
const ROUNDS = Number(process.env['BENCH_SERVE_ROUNDS'] ?? 3);
const REQUESTS = Number(process.env['BENCH_SERVE_REQUESTS'] ?? 10_000);
const CONCURRENCY = Number(process.env['BENCH_SERVE_CONCURRENCY'] ?? 1_000);
const IDLE_MS = 15_000;

/** `REQUESTS` GETs, `CONCURRENCY` in flight, on as many connections; RSS sampled every 50 ms. */
async function round(
  base: string,
  pid: number,
): Promise<{ peak: number; ms: number; failed: number; why: Map<string, number> }> {
  const pool = new Pool(base, { connections: CONCURRENCY, pipelining: 1 });
  let peak = rssMb(pid);
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 50);
  let next = 0;
  let failed = 0;
  const why = new Map<string, number>();
  const count = (k: string) => why.set(k, (why.get(k) ?? 0) + 1);
  const started = performance.now();
  const worker = async () => {
    while (next < REQUESTS) {
      const i = next++;
      const path = i % 10 === 8 ? '/metrics' : i % 10 === 9 ? '/healthz' : '/';
      try {
        const res = await pool.request({ method: 'GET', path });
        await res.body.text();
        if (res.statusCode !== 200) {
          failed++;
          count(`${path} ${res.statusCode}`);
        }
      } catch (e) {
        failed++;
        count(`${path} ${(e as { code?: string }).code ?? 'error'}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const ms = performance.now() - started;
  clearInterval(sampler);
  await pool.close();
  return { peak: Math.max(peak, rssMb(pid)), ms, failed, why };
}

export async function run(): Promise<void> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);
  const dir = mkdtempSync(join(tmpdir(), 'qg-bench-serve-'));
  const sim = await startSimulator({ port: 0 });
  const file = join(dir, 'config.yaml');
  writeFileSync(
    file,
    [
      `store: sqlite:${join(dir, 'ledger.db')}`,
      `cache: { path: ${join(dir, 'cache.db')} }`,
      `upstream: { baseUrl: ${sim.url} }`,
      'regions: [US, GB, DE]',
      '',
    ].join('\n'),
  );
  const env = { ...process.env, YOUTUBE_API_KEY: 'bench-key', LOG_LEVEL: 'silent' };
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    for (const region of ['US', 'GB', 'US']) {
      const code = await cliMain(['node', 'quota-guard', 'fetch', '-r', region, '--config', file]);
      if (code !== 0) throw new Error(`fetch ${region} exited ${code}`);
    }
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
  await sim.close();

  const child = spawn(process.execPath, [BIN, 'serve', '--config', file, '--http', '127.0.0.1:0'], {
    env: { ...process.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    const base = await listening(child, /serving (http:\/\/127\.0\.0\.1:\d+)\/metrics/);
    const pid = child.pid!;
    await sleep(1_000);
    console.log(
      `serve (${BIN === join(ROOT, 'dist/cli/bin.js') ? 'this build' : BIN}): ${ROUNDS} rounds of ${REQUESTS} requests, ` +
        `${CONCURRENCY} at a time; load average ${loadavg()[0]!.toFixed(1)}`,
    );
    const size = async (path: string) => (await (await fetch(`${base}${path}`)).arrayBuffer()).byteLength;
    console.log(`answers: / ${await size('/')} bytes, /metrics ${await size('/metrics')} bytes`);
    console.log(`\n| | RSS MB |\n|---|---:|\n| started | ${rssMb(pid)} |`);
    for (let r = 1; r <= ROUNDS; r++) {
      const { peak, ms, failed, why } = await round(base, pid);
      const whyText = [...why].map(([k, n]) => `${n} ${k}`).join(', ');
      console.log(
        `| round ${r}: highest (${(ms / 1000).toFixed(1)} s, ${failed} not 200${whyText ? `: ${whyText}` : ''}) | ${peak} |`,
      );
      console.log(`| round ${r}: at its end | ${rssMb(pid)} |`);
      await sleep(IDLE_MS);
      console.log(`| round ${r}: after ${IDLE_MS / 1000} s idle | ${rssMb(pid)} |`);
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}
