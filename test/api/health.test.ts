/**
 * `/healthz` of `serve --decisions` says whether spends can be recorded now, with the reason: a
 * Redis at its `maxmemory` answers PING but refuses every write, and a SQLite ledger whose write
 * lock another process holds answers reads but records nothing; both are 503 with the reason, and
 * 200 again once writes go through. A `serve` that only reads stays healthy on a full Redis.
 */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { type RedisServer, startRedisServer } from '../harness/redis.js';
import { tmpPath } from '../job-library/helpers.js';
import { type Served, startServe, writeConfig } from './helpers.js';

interface Healthz {
  status: string;
  ok: boolean;
  reason?: string;
  checks: { ledger?: { ok: boolean }; writes?: { ok: boolean; error?: string } };
}

async function healthz(url: string): Promise<{ status: number; body: Healthz }> {
  const r = await fetch(`${url}/healthz`);
  return { status: r.status, body: (await r.json()) as Healthz };
}

const stops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

it('is 503 with the reason while Redis refuses writes at its maxmemory, and 200 once it takes them', async () => {
  const redis: RedisServer = await startRedisServer();
  stops.push(() => redis.stop());
  const cred = `hz${randomBytes(3).toString('hex')}`;
  const config = writeConfig({ store: redis.url, credentials: [{ id: cred }] });
  const served: Served = await startServe(config);
  stops.push(() => served.stop());
  const admin = new Redis(redis.url);
  stops.push(async () => void admin.disconnect());

  const ok = await healthz(served.url);
  expect(ok.status).toBe(200);
  expect(ok.body).toMatchObject({ status: 'ok', checks: { ledger: { ok: true }, writes: { ok: true } } });

  await admin.config('SET', 'maxmemory', '1');
  try {
    const full = await healthz(served.url);
    expect(full.status).toBe(503);
    expect(full.body.checks.ledger?.ok).toBe(true);
    expect(full.body.checks.writes?.ok).toBe(false);
    expect(full.body.reason).toMatch(/^spends cannot be recorded: the ledger store refuses writes: .*/);
    expect(full.body.reason).toMatch(/OOM|maxmemory|memory/i);
    // Every spend is refused meanwhile: what the health check said.
    const spend = await fetch(`${served.url}/v1/spend`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ credential: cred, method: 'videos.list' }),
    });
    expect(await spend.json()).toMatchObject({ allowed: false, reason: 'store-down' });
    // A serve that only reads does not spend: the store answering is its health.
    const reading = await startServeReadOnly(config);
    stops.push(() => reading.stop());
    expect((await healthz(reading.url)).status).toBe(200);
  } finally {
    await admin.config('SET', 'maxmemory', '0');
  }
  expect((await healthz(served.url)).status).toBe(200);
});

it('is 503 with the reason while another process holds the SQLite write lock, and 200 once it is let go', async () => {
  const file = tmpPath('health-lock.db');
  const served = await startServe(writeConfig({ store: `sqlite:${file}`, credentials: [{ id: 'default' }] }));
  stops.push(() => served.stop());
  expect((await healthz(served.url)).status).toBe(200);
  const other = new Database(file);
  try {
    other.exec('BEGIN IMMEDIATE');
    const locked = await healthz(served.url);
    expect(locked.status).toBe(503);
    expect(locked.body.checks.ledger?.ok).toBe(true);
    expect(locked.body.reason).toMatch(
      /^spends cannot be recorded: the ledger store refuses writes: .*locked/,
    );
    other.exec('COMMIT');
  } finally {
    other.close();
  }
  expect((await healthz(served.url)).status).toBe(200);
}, 30_000);

/** `serve` without `--decisions` on the same config. */
async function startServeReadOnly(config: string): Promise<{ url: string; stop(): Promise<void> }> {
  const { spawn } = await import('node:child_process');
  const bin = new URL('../../src/cli/bin.ts', import.meta.url).pathname;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', bin, 'serve', '--config', config, '--http', '127.0.0.1:0'],
    {
      env: { ...process.env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /serving (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}
