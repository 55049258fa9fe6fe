/**
 * Proof: a CLI command on a Redis that is stopped (SIGSTOP: the kernel still accepts connections,
 * nothing answers) or refuses connections ends on its own, with no socket or timer keeping the
 * process alive after its answer, and so does a command that fails after the store was opened.
 * The wall times are printed (docs/operations.md quotes them); the test only asserts that each
 * command exits at all within 30 s and that nothing lingered after it (bin.ts says so when it must
 * end a process that stayed busy).
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { freePort, type RedisServer, startRedisServer } from '../harness/redis.js';
import { tmpPath } from '../job-library/helpers.js';
import { type ChildResult, configFile, runChild } from './helpers.js';

const LINGER = /still busy .* after the command ended/;
const EXIT_WITHIN_MS = 30_000;

let stopped: RedisServer;
let refusedUrl: string;
let sentinelsUrl: string;
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  stopped = await startRedisServer();
  stopped.proc.kill('SIGSTOP');
  refusedUrl = `redis://127.0.0.1:${await freePort()}`;
  sentinelsUrl = `redis-sentinel://127.0.0.1:${await freePort()},127.0.0.1:${await freePort()}/qg`;
});

afterAll(async () => {
  stopped?.proc.kill('SIGCONT');
  await stopped?.stop();
  if (stopped) rmSync(stopped.dir, { recursive: true, force: true });
  await sim?.close();
});

function config(store: string): string {
  return configFile({
    store,
    cache: { path: tmpPath(`cache-${Math.random().toString(36).slice(2)}.db`) },
    upstream: { baseUrl: sim.url },
    credentials: [{ id: 'default', apiKeyEnv: 'QG_EXIT_TEST_KEY' }],
    regions: ['US'],
  });
}

async function run(args: string[], env: Record<string, string> = {}): Promise<ChildResult> {
  const r = await runChild(
    args,
    { QG_EXIT_TEST_KEY: 'k-exit-test', LOG_LEVEL: 'silent', ...env },
    EXIT_WITHIN_MS,
  );
  console.log(`${args.slice(0, 2).join(' ')}: exit ${r.code} after ${Math.round(r.ms)} ms`);
  return r;
}

describe.each([
  ['stopped', () => stopped.url],
  ['refusing', () => refusedUrl],
  ['Sentinel-managed (no Sentinel answering)', () => sentinelsUrl],
])('CLI on a %s Redis', (_name, url) => {
  it('spend, status and fetch end on their own with the store-down answer', async () => {
    const file = config(url());
    // Two at a time: the machine may be busy, and each is a whole Node process.
    const [spend, status] = await Promise.all([
      run(['spend', 'default', '--cost', '1', '--config', file]),
      run(['status', '--config', file]),
    ]);
    const [closed, fetch] = await Promise.all([
      run(['spend', 'default', '--cost', '5000', '--config', file]),
      run(['fetch', '--config', file]),
    ]);
    // Cheap spends fail open, expensive ones closed (69); status cannot say anything (69).
    expect(spend).toMatchObject({ code: 0 });
    expect(spend.stdout).toMatch(/without recording it/);
    expect(closed).toMatchObject({ code: 69 });
    expect(status).toMatchObject({ code: 69 });
    expect(status.stderr).toMatch(/QG_STORE_UNAVAILABLE/);
    expect(fetch).toMatchObject({ code: 0 });
    expect(fetch.stdout).toMatch(/^trending:US {2}done {2}4 pages/m);
    for (const r of [spend, closed, status, fetch]) expect(r.stderr).not.toMatch(LINGER);
  });
});

describe('an error after the store is open', () => {
  it('a command that fails once Redis is connected still ends (the store is closed on every path)', async () => {
    const live = await startRedisServer();
    try {
      const file = config(live.url);
      // An unknown credential fails inside the command, after the ledger opened.
      const r = await run(['spend', 'nobody', '--cost', '1', '--config', file]);
      expect(r.code).not.toBeNull();
      expect(r.code).not.toBe(0);
      expect(r.stderr).not.toMatch(LINGER);
      const level = await run(['status', '--config', file], { LOG_LEVEL: 'warning' });
      expect(level.code).not.toBeNull();
      expect(level.stderr).not.toMatch(LINGER);
    } finally {
      await live.stop();
      rmSync(live.dir, { recursive: true, force: true });
    }
  });
});
