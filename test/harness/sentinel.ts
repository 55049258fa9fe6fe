/**
 * A Sentinel-managed Redis on loopback for failover tests: a primary, one replica and three
 * Sentinels (Debian's `redis-sentinel` package), quick to declare the primary down (400 ms). The
 * replica can replicate through a proxy that holds the primary's stream back by a set delay, so that
 * a kill -9 of the primary loses exactly what a replica that far behind would lose.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, type RedisServer, startRedisServer } from './redis.js';

const execFileP = promisify(execFile);

export const SENTINEL_HINT =
  'redis-sentinel was not found on PATH (Debian/Ubuntu: `apt-get install -y redis-sentinel`)';

export function hasRedisSentinel(): boolean {
  return spawnSync('redis-sentinel', ['--version'], { stdio: 'ignore' }).status === 0;
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await execFileP('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]);
  return stdout.trim();
}

async function until(what: string, ok: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await ok()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`sentinel harness: ${what} did not happen in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A TCP proxy that forwards the server's bytes `delayMs` late. When the server dies, what it still
 * holds is dropped, as a replica that far behind loses it; `cut()` drops it on demand.
 */
export interface LagProxy {
  port: number;
  cut(): void;
  close(): Promise<void>;
}

export async function startLagProxy(targetPort: number, delayMs: number): Promise<LagProxy> {
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    upstream.on('data', (chunk) => {
      const t = setTimeout(() => {
        timers.delete(t);
        if (!client.destroyed) client.write(chunk);
      }, delayMs);
      timers.add(t);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const cut = () => {
    for (const t of timers) clearTimeout(t);
    timers.clear();
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  return {
    port,
    cut,
    close: async () => {
      cut();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export interface SentinelSetup {
  name: string;
  primary: RedisServer;
  replicas: RedisServer[];
  sentinelPorts: number[];
  /** `redis-sentinel://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3/<name>` */
  url: string;
  /** The primary's port as the Sentinels see it now. */
  primaryPort(): Promise<number>;
  /** Resolves once the Sentinels have promoted a replica. */
  failedOver(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `replicas` replicas (default 1; WAIT for one replica needs two, so that the new primary still has
 * one after a failover). `lagMs` > 0: each replicates through a LagProxy that far behind the primary.
 */
export async function startSentinelSetup(
  opts: { lagMs?: number; replicas?: number } = {},
): Promise<SentinelSetup> {
  const name = 'qgprimary';
  const primary = await startRedisServer();
  const proxies: LagProxy[] = [];
  const replicas: RedisServer[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'qg-sentinel-'));
  const sentinels: ChildProcess[] = [];
  const sentinelPorts: number[] = [];
  const stop = async () => {
    for (const s of sentinels) s.kill('SIGKILL');
    for (const p of proxies) await p.close();
    await Promise.all([primary, ...replicas].map((r) => r.stop()));
    for (const d of [dir, primary.dir, ...replicas.map((r) => r.dir)]) {
      rmSync(d, { recursive: true, force: true });
    }
  };
  try {
    for (let i = 0; i < (opts.replicas ?? 1); i++) {
      const proxy = opts.lagMs ? await startLagProxy(primary.port, opts.lagMs) : undefined;
      if (proxy) proxies.push(proxy);
      replicas.push(
        await startRedisServer(['--replicaof', '127.0.0.1', String(proxy?.port ?? primary.port)]),
      );
    }
    for (const r of replicas) {
      await until('replication', async () =>
        /master_link_status:up/.test(await cli(r.port, 'INFO', 'replication')),
      );
    }
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `logfile ${join(dir, `sentinel-${port}.log`)}`,
          `sentinel monitor ${name} 127.0.0.1 ${primary.port} 2`,
          `sentinel down-after-milliseconds ${name} 400`,
          // Long: Sentinel points a replica that reports another primary (the lag proxy) back at the
          // real one after this much time; a failover on loopback takes about a second anyway.
          `sentinel failover-timeout ${name} 60000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      const p = spawn('redis-sentinel', [conf], { stdio: 'ignore' });
      p.unref();
      sentinels.push(p);
      sentinelPorts.push(port);
    }
    // Each Sentinel must know the replica and the two other Sentinels before a failover can happen.
    for (const port of sentinelPorts) {
      await until(`sentinel ${port} ready`, async () => {
        const info = await cli(port, 'SENTINEL', 'MASTER', name);
        const field = (k: string) => Number(info.split('\n')[info.split('\n').indexOf(k) + 1]);
        return field('num-slaves') >= replicas.length && field('num-other-sentinels') >= 2;
      });
    }
  } catch (e) {
    await stop();
    throw e;
  }
  const primaryPort = async () =>
    Number((await cli(sentinelPorts[0]!, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)).split('\n')[1]);
  return {
    name,
    primary,
    replicas,
    sentinelPorts,
    url: `redis-sentinel://${sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',')}/${name}`,
    primaryPort,
    failedOver: () => until('failover', async () => (await primaryPort()) !== primary.port),
    stop,
  };
}
