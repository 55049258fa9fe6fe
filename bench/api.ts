/**
 * `npm run bench -- api`: the decision API (`serve --decisions`, with a bearer token) under 1, 8
 * and 32 keep-alive clients, on Redis and on SQLite; beside it, in the same run, the floor (a bare
 * node:http server doing one Lua spend per request through ioredis, bench/api-floor.ts), the
 * in-process guard, and the `spend` command. A private redis-server; the load generator is this
 * process and shares the machine's cores with the servers.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Pool } from 'undici';
import { loadConfig } from '../src/config/load.js';
import { createGuard } from '../src/guard/guard.js';
import { openLedger } from '../src/ledger/open.js';
import { startRedisServer } from '../test/harness/redis.js';

const ROOT = new URL('..', import.meta.url).pathname;
const MEASURE_MS = 2000;
const WARMUP_MS = 500;
/** Rounds per row: the HTTP targets take turns, so a busy moment of the machine hits each alike. */
const ROUNDS = 3;
const CLIENTS = [1, 8, 32];
const QUOTA = 1_000_000_000;

interface Result {
  what: string;
  store: string;
  clients: number;
  perSecond: number;
  p50: number;
  p99: number;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** `clients` loops, each one request after the other, for `ms`: decisions/s and latencies (ms). */
async function load(clients: number, ms: number, one: (loop: number) => Promise<void>) {
  const lat: number[] = [];
  const until = performance.now() + ms;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_v, loop) => {
      while (performance.now() < until) {
        const t = performance.now();
        await one(loop);
        lat.push(performance.now() - t);
      }
    }),
  );
  const elapsed = performance.now() - started;
  lat.sort((a, b) => a - b);
  return { perSecond: (lat.length / elapsed) * 1000, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99) };
}

/** A child process that prints a line matching `ready` on stdout or stderr; resolves with the match. */
async function child(args: string[], ready: RegExp): Promise<{ proc: ChildProcess; match: RegExpExecArray }> {
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOG_LEVEL: 'info' },
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const look = (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) resolve({ proc, match: m });
    };
    proc.stdout!.on('data', look);
    proc.stderr!.on('data', look);
    proc.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${out}`)));
  });
}

async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const gone = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await gone;
}

interface HttpTarget {
  what: string;
  store: string;
  url: string;
  token?: string;
  body: () => string;
}

/**
 * The HTTP targets under 1, 8, 32 keep-alive clients (one connection each): for each client
 * count, ROUNDS rounds in which every target runs in turn; a row is the median round.
 */
async function http(targets: HttpTarget[], row: (r: Result) => void): Promise<void> {
  for (const clients of CLIENTS) {
    const pools = targets.map((t) => new Pool(t.url, { connections: clients, pipelining: 1 }));
    const ones = targets.map((t, i) => {
      const headers = {
        'content-type': 'application/json',
        ...(t.token ? { authorization: `Bearer ${t.token}` } : {}),
      };
      return async () => {
        const r = await pools[i]!.request({ method: 'POST', path: '/v1/spend', headers, body: t.body() });
        const text = await r.body.text();
        if (r.statusCode !== 200) throw new Error(`${t.what}: ${r.statusCode} ${text}`);
      };
    });
    for (const one of ones) await load(clients, WARMUP_MS, one);
    const rounds: Array<Array<{ perSecond: number; p50: number; p99: number }>> = targets.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < targets.length; i++) rounds[i]!.push(await load(clients, MEASURE_MS, ones[i]!));
    }
    targets.forEach((t, i) => {
      const rs = rounds[i]!.sort((a, b) => a.perSecond - b.perSecond);
      row({ what: t.what, store: t.store, clients, ...rs[Math.floor(rs.length / 2)]! });
    });
    for (const p of pools) await p.close();
  }
}

function fmt(n: number, digits = 0): string {
  return Number.isNaN(n)
    ? '–'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'qg-bench-api-'));
  const redis = await startRedisServer();
  const procs: ChildProcess[] = [];
  const results = {
    rows: [] as Result[],
    push(...rs: Result[]) {
      for (const r of rs) {
        this.rows.push(r);
        console.log(
          `| ${r.what} | ${r.store} | ${r.clients} | ${fmt(r.perSecond)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} |`,
        );
      }
    },
    find(f: (r: Result) => boolean) {
      return this.rows.find(f);
    },
  };
  try {
    const token = randomBytes(24).toString('base64url');
    const tokens = join(dir, 'tokens.yaml');
    writeFileSync(
      tokens,
      `tokens:\n  - name: bench\n    sha256: ${createHash('sha256').update(token).digest('hex')}\n    credentials: [default]\n    tiers: [scheduled]\n`,
    );
    const config = (store: string) => {
      const file = join(dir, `config-${randomBytes(3).toString('hex')}.yaml`);
      writeFileSync(
        file,
        `store: ${store}\ncredentials:\n  - id: default\n    buckets: { units: { quota: ${QUOTA} } }\n`,
      );
      return file;
    };
    const redisConfig = config(redis.url);
    const sqliteConfig = config(`sqlite:${join(dir, 'ledger.db')}`);
    const version = (await promisify(execFile)('redis-server', ['--version'])).stdout.trim();
    console.log(
      `private ${version.split(' sha')[0]} on ${redis.url}; HTTP rows: the median of ${ROUNDS} rounds of ${MEASURE_MS / 1000} s, the targets taking turns; others ${MEASURE_MS / 1000} s; load generator in this process\n`,
    );

    console.log('| what | store | clients | decisions/s | p50 ms | p99 ms |');
    console.log('|---|---|--:|--:|--:|--:|');
    const floor = await child(['--import', 'tsx', 'bench/api-floor.ts', redis.url], /^(\d+)$/m);
    procs.push(floor.proc);
    // The bundled CLI when built (what an operator runs), else the sources through tsx.
    const cliArgs = existsSync(join(ROOT, 'dist/cli/bin.js'))
      ? ['dist/cli/bin.js']
      : ['--import', 'tsx', 'src/cli/bin.ts'];
    const serve = async (file: string) => {
      const s = await child(
        [...cliArgs, 'serve', '--config', file, '--http', '127.0.0.1:0', '--decisions', '--tokens', tokens],
        /decision API at (http:\/\/127\.0\.0\.1:\d+)\/v1\//,
      );
      procs.push(s.proc);
      return s.match[1]!;
    };
    const apiRedis = await serve(redisConfig);
    const apiSqlite = await serve(sqliteConfig);

    let entry = 0;
    const spendBody = () =>
      `{"credential":"default","method":"videos.list","tag":"bench","entry":"b${(entry++).toString(36)}"}`;
    await http(
      [
        {
          what: 'floor: node:http + one Lua spend',
          store: 'redis',
          url: `http://127.0.0.1:${floor.match[1]}`,
          body: () => '{"cost":1}',
        },
        { what: 'decision API', store: 'redis', url: apiRedis, token, body: spendBody },
        { what: 'decision API', store: 'sqlite', url: apiSqlite, token, body: spendBody },
      ],
      (r) => results.push(r),
    );

    // The in-process guard on the same Redis: what a Node job pays per decision.
    const ledger = await openLedger(redis.url);
    const guard = createGuard({ config: loadConfig({ file: redisConfig, env: {} }), ledger });
    for (const clients of CLIENTS) {
      const one = async () => {
        await guard.spend({ credential: 'default', method: 'videos.list', tag: 'bench' });
      };
      await load(clients, WARMUP_MS, one);
      results.push({
        what: 'in-process guard',
        store: 'redis',
        clients,
        ...(await load(clients, MEASURE_MS, one)),
      });
    }
    await ledger.close();

    // The `spend` command, one process per decision (the bundled CLI when built).
    const bundled = existsSync(join(ROOT, 'dist/cli/bin.js'));
    const bin = bundled ? ['dist/cli/bin.js'] : ['--import', 'tsx', 'src/cli/bin.ts'];
    const lat: number[] = [];
    for (let i = 0; i < 12; i++) {
      const t = performance.now();
      await promisify(execFile)(
        process.execPath,
        [...bin, 'spend', 'default', '--method', 'videos.list', '--config', redisConfig],
        { cwd: ROOT },
      );
      if (i >= 2) lat.push(performance.now() - t);
    }
    lat.sort((a, b) => a - b);
    const p50 = quantile(lat, 0.5);
    results.push({
      what: `spend command (${bundled ? 'dist bundle' : 'tsx'}), one process per decision`,
      store: 'redis',
      clients: 1,
      perSecond: 1000 / p50,
      p50,
      p99: lat[lat.length - 1]!,
    });

    const f8 = results.find((r) => r.what.startsWith('floor') && r.clients === 8)!;
    const a8 = results.find((r) => r.what === 'decision API' && r.store === 'redis' && r.clients === 8)!;
    console.log(
      `\n8 clients on Redis, decision API vs floor: ${fmt(a8.perSecond / f8.perSecond, 2)}× the throughput (target ≥ 0.5), ${fmt(a8.p50 / f8.p50, 2)}× the p50 (target ≤ 2)`,
    );
  } finally {
    for (const p of procs) await stop(p);
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(redis.dir, { recursive: true, force: true });
  }
}
