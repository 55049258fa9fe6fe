/**
 * Guard section of `npm run bench`: what the guard adds to one HTTP call. The same request to the
 * simulator on loopback (in its own process, as the drill runs it), made unguarded and guarded in
 * rotating turns of the same run, one at a time, on an SQLite ledger and on a private redis-server:
 * `fetch` vs a bare spend then `fetch` vs `guardedFetch`, and undici's `request` through a plain
 * Agent vs one composed with `guardInterceptor`; then the same fetch rows over an in-memory fetch,
 * which leaves the wrapper's own code. The added cost is the difference of the medians (and the
 * median of the per-round differences, which cancels drift between rounds).
 *
 * Environment (defaults in brackets):
 *   QG_BENCH_GUARD_N [2000]   measured rounds per scenario (after 200 warm-up rounds)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { parseConfig } from '../src/config/load.js';
import { createGuard, type Guard } from '../src/guard/guard.js';
import { guardedFetch, guardInterceptor } from '../src/http/index.js';
import { openLedger } from '../src/ledger/open.js';
import type { Ledger } from '../src/ledger/types.js';
import { startRedisServer } from '../test/harness/redis.js';
import { KEY, startSimulatorProcess } from './simulator.js';

const N = Number(process.env.QG_BENCH_GUARD_N || 2_000);
const WARM = 200;
const silent = { info() {}, warn() {} };

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.99 * s.length) - 1)] ?? Number.NaN;
}

/**
 * `plain` and each guarded variant once per round, the order rotating from round to round so that
 * none always runs first (a cold turn) or right after another; N measured rounds. Each variant's
 * added cost is its median less the plain one's, and the median of its per-round differences from
 * the plain call of the same round (which cancels drift between rounds).
 */
async function rounds(plain: () => Promise<unknown>, variants: Array<() => Promise<unknown>>) {
  const calls = [plain, ...variants];
  const times: number[][] = calls.map(() => []);
  for (let i = 0; i < WARM + N; i++) {
    const t: number[] = [];
    for (let k = 0; k < calls.length; k++) {
      const j = (i + k) % calls.length;
      const s = performance.now();
      await calls[j]!();
      t[j] = performance.now() - s;
    }
    if (i < WARM) continue;
    for (let j = 0; j < calls.length; j++) times[j]!.push(t[j]!);
  }
  const base = times[0]!;
  return variants.map((_, v) => {
    const g = times[v + 1]!;
    return {
      plain: median(base),
      guarded: median(g),
      added: median(g) - median(base),
      pairDiff: median(g.map((x, k) => x - base[k]!)),
      p99: p99(g),
    };
  });
}

const ms = (x: number) => x.toFixed(3);

async function scenarios(store: string, ledger: Ledger, url: string): Promise<void> {
  const config = parseConfig(
    {
      store: { url: 'sqlite::memory:' },
      credentials: [
        { id: 'default', apiKeyEnv: 'QG_BENCH_KEY', buckets: { units: { quota: 1_000_000_000 } } },
      ],
    },
    { env: { QG_BENCH_KEY: KEY } },
  );
  const guard: Guard = createGuard({ config, ledger, logger: silent });
  const args = { credential: 'default', method: 'videos.list', tag: 'bench:videos.list' };
  const target = `${url}/videoCategories?part=snippet&regionCode=US&key=${KEY}`;

  const [viaSpend, viaFetch] = await rounds(
    async () => (await fetch(target)).arrayBuffer(),
    [
      // The floor of any spend-before-send: one ledger spend, then the same fetch, no outcome handling.
      async () => {
        await guard.spend(args);
        return (await fetch(target)).arrayBuffer();
      },
      async () => {
        const r = await guardedFetch(guard, args, target);
        if (!r.ok) throw new Error(r.message);
        return r.value.arrayBuffer();
      },
    ],
  );
  // The guard's own decision alone (the ledger's round trip included), for the breakdown.
  const spendOnly: number[] = [];
  for (let i = 0; i < WARM + N; i++) {
    const t = performance.now();
    await guard.spend(args);
    if (i >= WARM) spendOnly.push(performance.now() - t);
  }
  // The wrapper's own code, without the network: the same two calls with a fetch that answers at
  // once from memory. What is left between them is guard.call, the retry wrapper and the checks.
  const answer = async () => new Response('{}', { status: 200 });
  const [codeSpend, codeFetch] = await rounds(answer, [
    async () => {
      await guard.spend(args);
      return answer();
    },
    async () => guardedFetch(guard, args, target, undefined, { fetch: answer }),
  ]);
  const agent = new Agent();
  const composed = new Agent().compose(guardInterceptor(guard, { spend: () => args }));
  const [viaUndici] = await rounds(
    async () => (await request(target, { dispatcher: agent })).body.arrayBuffer(),
    [async () => (await request(target, { dispatcher: composed })).body.arrayBuffer()],
  );
  await agent.close();
  await composed.close();
  for (const [name, r] of [
    ['fetch vs guard.spend, then fetch', viaSpend!],
    ['fetch vs guardedFetch', viaFetch!],
    ['undici request vs guardInterceptor', viaUndici!],
    ['in-memory fetch vs guard.spend, then it', codeSpend!],
    ['in-memory fetch vs guardedFetch over it', codeFetch!],
  ] as const) {
    console.log(
      `| ${store} | ${name} | ${ms(r.plain)} | ${ms(r.guarded)} | ${ms(r.added)} | ${ms(r.pairDiff)} | ${ms(r.p99)} |`,
    );
  }
  console.log(`| ${store} | guard.spend alone | | ${ms(median(spendOnly))} | | | ${ms(p99(spendOnly))} |`);
}

export async function run(): Promise<void> {
  const { url, child } = await startSimulatorProcess();
  const dir = mkdtempSync(join(tmpdir(), 'qg-bench-guard-'));
  const redis = await startRedisServer();
  try {
    console.log(
      `${N} rounds per row after ${WARM} warm-up rounds, one request at a time, the order rotating; ms\n`,
    );
    console.log(
      '| ledger | calls | unguarded p50 | guarded p50 | added (p50 − p50) | added (median of rounds) | guarded p99 |',
    );
    console.log('|---|---|---|---|---|---|---|');
    const sqlite = await openLedger(`sqlite:${join(dir, 'ledger.db')}`);
    try {
      await scenarios('SQLite', sqlite, url);
    } finally {
      await sqlite.close();
    }
    const r = await openLedger(redis.url, { keyPrefix: 'bench:' });
    try {
      await scenarios('Redis', r, url);
    } finally {
      await r.close();
    }
  } finally {
    child.kill('SIGTERM');
    await redis.stop();
    rmSync(redis.dir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}
