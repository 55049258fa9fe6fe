/**
 * `npm run bench -- cli`: how long one CLI command takes from a shell, next to a bare `node -e 0` in
 * the same run. Builds dist/ first (the CLI a user runs is the built and bundled one), starts a private
 * redis-server, then runs interleaved rounds: in each round every case once, in a rotating order,
 * each a fresh `node` process timed from spawn to exit. Prints the median wall time of each case and
 * its ratio to the bare Node start, and, from GNU time when installed, the mean CPU time (user +
 * system, which other work on the machine disturbs less than wall time) and the median peak RSS.
 * GNU time gives CPU time in steps of 10 ms, so a median moves in whole steps and cannot show a
 * change of 5 ms; the mean of the rounds' steps can, to a millisecond or two.
 *
 * `BENCH_CLI_BASELINE=/other/checkout/dist/cli/bin.js` adds the same commands run by another build
 * (an older commit, say) to the same rounds.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedisServer } from '../test/harness/redis.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'dist/cli/bin.js');
const ROUNDS = 20;

interface Case {
  name: string;
  args: string[];
  env?: Record<string, string>;
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

interface Sample {
  ms: number;
  cpuMs?: number;
  rssMb?: number;
}

/** Wall ms of one process, and its CPU ms and peak RSS (MB) via GNU time when installed. */
function timeOnce(c: Case, cwd: string, gnuTime: boolean): Sample {
  const env = { ...process.env, LOG_LEVEL: 'warn', ...c.env };
  const t0 = process.hrtime.bigint();
  const r = gnuTime
    ? spawnSync('/usr/bin/time', ['-f', '%U %S %M', process.execPath, ...c.args], {
        cwd,
        env,
        encoding: 'utf8',
      })
    : spawnSync(process.execPath, c.args, { cwd, env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${c.name} exited ${r.status}: ${r.stderr}`);
  if (!gnuTime) return { ms };
  const [user, sys, kb] = (r.stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
  if (user === undefined || sys === undefined || kb === undefined || [user, sys, kb].some(Number.isNaN)) {
    return { ms };
  }
  return { ms, cpuMs: (user + sys) * 1000, rssMb: kb / 1024 };
}

export async function run(): Promise<void> {
  // What `npm run build` does: the library with tsc, then the CLI bundle (scripts/bundle-cli.mjs).
  const build = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (build.status !== 0) throw new Error(`build failed:\n${build.stdout}${build.stderr}`);
  const bundle = spawnSync(process.execPath, [join(ROOT, 'scripts/bundle-cli.mjs')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (bundle.status !== 0) throw new Error(`bundle failed:\n${bundle.stdout}${bundle.stderr}`);
  const gnuTime = spawnSync('/usr/bin/time', ['-f', '%M', 'true']).status === 0;
  const dir = mkdtempSync(join(tmpdir(), 'qg-bench-cli-'));
  const redis = await startRedisServer();
  try {
    writeFileSync(join(dir, 'redis.yaml'), `store: ${redis.url}\n`);
    const redisEnv = { QUOTA_GUARD_CONFIG: join(dir, 'redis.yaml') };
    const commands = (bin: string, label: string): Case[] => [
      { name: `--help${label}`, args: [bin, '--help'] },
      { name: `spend (SQLite, defaults)${label}`, args: [bin, 'spend', 'default', '--cost', '1'] },
      { name: `status (SQLite, defaults)${label}`, args: [bin, 'status'] },
      {
        name: `spend (Redis, config file)${label}`,
        args: [bin, 'spend', 'default', '--cost', '1'],
        env: redisEnv,
      },
      { name: `status (Redis, config file)${label}`, args: [bin, 'status'], env: redisEnv },
      {
        name: `spend (Redis, REDIS_URL)${label}`,
        args: [bin, 'spend', 'default', '--cost', '1'],
        env: { REDIS_URL: redis.url },
      },
    ];
    const baseline = process.env['BENCH_CLI_BASELINE'];
    const cases: Case[] = [
      { name: 'node -e 0', args: ['-e', '0'] },
      ...commands(BIN, ''),
      ...(baseline ? commands(baseline, ' — baseline') : []),
    ];
    // One untimed round: creates the SQLite file and loads the scripts into Redis.
    for (const c of cases) timeOnce(c, dir, false);
    const samples = new Map<string, Sample[]>(cases.map((c) => [c.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < cases.length; i++) {
        const c = cases[(i + round) % cases.length]!;
        samples.get(c.name)!.push(timeOnce(c, dir, gnuTime));
      }
    }
    const stat = (name: string, k: keyof Sample) => {
      const xs = samples.get(name)!.flatMap((s) => (s[k] === undefined ? [] : [s[k]]));
      return xs.length ? (k === 'cpuMs' ? mean(xs) : median(xs)) : undefined;
    };
    const baseMs = stat('node -e 0', 'ms')!;
    const baseCpu = stat('node -e 0', 'cpuMs');
    console.log(
      `${ROUNDS} interleaved rounds per process: median wall time and RSS, mean CPU time (load average ${loadavg()[0]!.toFixed(1)})`,
    );
    console.log('');
    console.log('| case | wall ms | × node -e 0 | CPU ms (mean) | × node -e 0 | RSS MB |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const c of cases) {
      const ms = stat(c.name, 'ms')!;
      const cpu = stat(c.name, 'cpuMs');
      const rss = stat(c.name, 'rssMb');
      const cpuCells =
        cpu !== undefined && baseCpu ? `${cpu.toFixed(0)} | ${(cpu / baseCpu).toFixed(2)}` : '– | –';
      console.log(
        `| ${c.name} | ${ms.toFixed(0)} | ${(ms / baseMs).toFixed(2)} | ${cpuCells} | ${rss?.toFixed(0) ?? '–'} |`,
      );
    }
  } finally {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
