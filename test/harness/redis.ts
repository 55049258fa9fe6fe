/**
 * Private Redis servers for tests: each on a free loopback port, with no persistence, in a temp
 * directory, stopped at the end. The shared server on 6379 is never touched.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Redis } from 'ioredis';

const execFileP = promisify(execFile);

export const INSTALL_HINT =
  'redis-server was not found on PATH. Install it (Debian/Ubuntu: `apt-get install -y redis-server`, ' +
  'macOS: `brew install redis`) or set REDIS_URL to a Redis the tests may use (keys get a unique prefix).';

export function hasRedisServer(): boolean {
  const r = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return r.status === 0;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** A free port p such that p + 10000 (the cluster bus port) is free too. */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const p = 20_000 + Math.floor(Math.random() * 10_000) + (process.pid % 7);
    if ((await portFree(p)) && (await portFree(p + 10_000))) return p;
  }
  throw new Error('no free port found for a private redis-server');
}

export interface RedisServer {
  port: number;
  url: string;
  dir: string;
  proc: ChildProcess;
  /** Stop the server (SIGKILL: it keeps nothing on disk anyway). Safe to call twice. */
  stop(): Promise<void>;
  /** Start it again on the same port (for outage tests). */
  restart(): Promise<void>;
}

async function waitForPing(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { stdout } = await execFileP('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'PING']);
      if (stdout.trim() === 'PONG') return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not start`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function spawnServer(port: number, dir: string, extra: string[]): ChildProcess {
  const proc = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--logfile',
      join(dir, 'redis.log'),
      ...extra,
    ],
    { stdio: 'ignore', detached: false },
  );
  proc.unref();
  return proc;
}

export async function startRedisServer(extra: string[] = []): Promise<RedisServer> {
  if (!hasRedisServer()) throw new Error(INSTALL_HINT);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), `qg-redis-${port}-`));
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    proc: spawnServer(port, dir, extra),
    async stop() {
      const p = server.proc;
      if (p.exitCode === null && p.signalCode === null) {
        const exited = new Promise<void>((r) => p.once('exit', () => r()));
        // Hold the event loop open until the exit arrives: the child was unref'd at spawn.
        p.ref();
        p.kill('SIGKILL');
        await exited;
      }
    },
    async restart() {
      await server.stop();
      server.proc = spawnServer(port, dir, extra);
      await waitForPing(port);
    },
  };
  await waitForPing(port);
  return server;
}

export interface RedisServers {
  /** Start a private server (with `extra` redis-server arguments), to be stopped by `stopAll`. */
  start(extra?: string[]): Promise<RedisServer>;
  /**
   * Stop every server started since the last call (one a test paused with SIGSTOP is resumed first)
   * and remove its directory. For an `afterEach`, once whatever uses them is closed.
   */
  stopAll(): Promise<void>;
}

/** Private servers for tests that each start their own, because each changes or stops its server. */
export function redisServers(): RedisServers {
  const servers: RedisServer[] = [];
  return {
    async start(extra = []) {
      const s = await startRedisServer(extra);
      servers.push(s);
      return s;
    },
    async stopAll() {
      for (const s of servers.splice(0)) {
        if (s.proc.signalCode === null && s.proc.exitCode === null) s.proc.kill('SIGCONT');
        await s.stop();
        rmSync(s.dir, { recursive: true, force: true });
      }
    },
  };
}

export interface RedisCluster {
  nodes: RedisServer[];
  /** `redis-cluster://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3` */
  url: string;
  stop(): Promise<void>;
}

/** Three masters, no replicas, all 16384 slots assigned. */
export async function startRedisCluster(size = 3): Promise<RedisCluster> {
  const nodes: RedisServer[] = [];
  try {
    for (let i = 0; i < size; i++) {
      nodes.push(await startRedisServer(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf']));
    }
    await execFileP('redis-cli', [
      '--cluster',
      'create',
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const states = await Promise.all(
        nodes.map(async (n) => {
          const { stdout } = await execFileP('redis-cli', ['-p', String(n.port), 'CLUSTER', 'INFO']);
          return /cluster_state:ok/.test(stdout);
        }),
      );
      if (states.every(Boolean)) break;
      if (Date.now() > deadline) throw new Error('redis cluster did not reach cluster_state:ok');
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (e) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw e;
  }
  return {
    nodes,
    url: `redis-cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`,
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
      for (const n of nodes) rmSync(n.dir, { recursive: true, force: true });
    },
  };
}

/** Every key whose name starts with `prefix`, sorted (SCAN, so a busy server is not held up). */
export async function keysUnder(redis: Pick<Redis, 'scan'>, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    out.push(...batch);
  } while (cursor !== '0');
  return out.sort();
}
