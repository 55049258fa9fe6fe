/**
 * `npm run bench -- serve-slow`: `quota-guard serve --decisions` (the built CLI, `dist/cli/bin.js`:
 * run `npm run build` first) under slow clients. 500 sockets connect and send nothing, 300 send a
 * header line every second and connect again 50 ms after they are closed (slowloris); meanwhile a
 * legitimate client asks every 100 ms for `/healthz`, `/metrics` and one spend, each on a
 * connection of its own, for `BENCH_SLOW_SECONDS` (default 20). It counts what was answered and
 * how fast, and reads the process's RSS from /proc every 50 ms.
 *
 * `BENCH_SERVE_BASE_BIN=<other build>/dist/cli/bin.js` runs that build too, in the same run, and the
 * table puts the two side by side. Only loopback is a target; the attack ends with the section.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { listening, rssMb } from './serve-process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'dist/cli/bin.js');
const BASE = process.env['BENCH_SERVE_BASE_BIN'];
const SECONDS = Number(process.env['BENCH_SLOW_SECONDS'] ?? 20);
const SILENT = 500;
const TRICKLING = 300;

/** The slow sockets, kept up until `stop`. */
function attack(port: number): { stop(): void; closedByServer: () => number } {
  let stopped = false;
  let closed = 0;
  const sockets = new Set<Socket>();
  const open = (trickle: boolean) => {
    if (stopped) return;
    const s = connect(port, '127.0.0.1');
    sockets.add(s);
    let timer: NodeJS.Timeout | undefined;
    s.on('error', () => {});
    s.once('connect', () => {
      if (!trickle) return;
      s.write('POST /v1/spend HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      timer = setInterval(() => s.write('X-Slow: 1\r\n'), 1_000);
    });
    s.once('close', () => {
      clearInterval(timer);
      sockets.delete(s);
      if (stopped) return;
      closed++;
      if (trickle) setTimeout(() => open(true), 50).unref();
    });
  };
  for (let i = 0; i < SILENT; i++) open(false);
  for (let i = 0; i < TRICKLING; i++) open(true);
  return {
    stop: () => {
      stopped = true;
      for (const s of sockets) s.destroy();
    },
    closedByServer: () => closed,
  };
}

interface Figures {
  started: number;
  peak: number;
  end: number;
  asked: number;
  answered: number;
  failed: Map<string, number>;
  p50: number;
  p99: number;
  max: number;
  shedByServer: number;
}

async function measure(bin: string): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'qg-bench-slow-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `store: sqlite:${join(dir, 'ledger.db')}\ncache: { path: ${join(dir, 'cache.db')} }\n`,
  );
  const child = spawn(
    process.execPath,
    [bin, 'serve', '--config', config, '--http', '127.0.0.1:0', '--decisions'],
    { env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  try {
    return await underAttack(
      await listening(child, /decision API at (http:\/\/127\.0\.0\.1:\d+)\/v1\//),
      child.pid!,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function underAttack(url: string, pid: number): Promise<Figures> {
  await sleep(1_000);
  const started = rssMb(pid);
  let peak = started;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 50);
  const a = attack(Number(new URL(url).port));
  await sleep(2_000);
  const failed = new Map<string, number>();
  const times: number[] = [];
  let asked = 0;
  const ask = async (path: string, init?: { method: 'POST'; body: string }) => {
    asked++;
    const agent = new Agent({ connections: 1 });
    const t0 = performance.now();
    try {
      const r = await request(`${url}${path}`, {
        dispatcher: agent,
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
        ...(init ? { ...init, headers: { 'content-type': 'application/json' } } : {}),
      });
      await r.body.text();
      if (r.statusCode !== 200)
        failed.set(`${path} ${r.statusCode}`, (failed.get(`${path} ${r.statusCode}`) ?? 0) + 1);
      else times.push(performance.now() - t0);
    } catch (e) {
      const k = `${path} ${(e as { code?: string }).code ?? 'error'}`;
      failed.set(k, (failed.get(k) ?? 0) + 1);
    } finally {
      await agent.close();
    }
  };
  const body = JSON.stringify({ credential: 'default', method: 'videos.list', tag: 'bench' });
  const until = Date.now() + SECONDS * 1000;
  while (Date.now() < until) {
    await Promise.all([ask('/healthz'), ask('/metrics'), ask('/v1/spend', { method: 'POST', body })]);
    await sleep(100);
  }
  a.stop();
  clearInterval(sampler);
  await sleep(1_000);
  times.sort((x, y) => x - y);
  const q = (p: number) => Math.round(times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0);
  return {
    started,
    peak,
    end: rssMb(pid),
    asked,
    answered: times.length,
    failed,
    p50: q(0.5),
    p99: q(0.99),
    max: Math.round(times[times.length - 1] ?? 0),
    shedByServer: a.closedByServer(),
  };
}

export async function run(): Promise<void> {
  const builds: Array<[string, string]> = [['this build', BIN]];
  if (BASE) builds.push([`base (${BASE})`, BASE]);
  for (const [, bin] of builds)
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run npm run build first`);
  console.log(
    `serve --decisions, SQLite; ${SILENT} silent and ${TRICKLING} trickling sockets; a legitimate ` +
      `/healthz, /metrics and spend every 100 ms for ${SECONDS} s; load average ${loadavg()[0]!.toFixed(1)}`,
  );
  const results: Figures[] = [];
  for (const [, bin] of builds) results.push(await measure(bin));
  const row = (label: string, f: (r: Figures) => string) =>
    console.log(`| ${label} | ${results.map(f).join(' | ')} |`);
  console.log(`\n| | ${builds.map(([n]) => n).join(' | ')} |\n|---|${builds.map(() => '---:').join('|')}|`);
  row('legitimate requests answered', (r) => `${r.answered} of ${r.asked}`);
  row('not answered', (r) => [...r.failed].map(([k, n]) => `${n} ${k}`).join(', ') || '0');
  row('answer time p50 / p99 / max (ms)', (r) => `${r.p50} / ${r.p99} / ${r.max}`);
  row('slow sockets closed by the server', (r) => String(r.shedByServer));
  row('RSS MB: started / highest / after', (r) => `${r.started} / ${r.peak} / ${r.end}`);
}
