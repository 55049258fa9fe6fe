/**
 * Slow clients cannot crowd out the rest, against real `serve --decisions` processes over SQLite
 * and Redis: with 500 sockets that connect and send nothing, and 300 that send a header line every
 * second and connect again when closed, `/healthz`, `/metrics` and spends are all answered, and each
 * allowed spend is recorded once. Over TLS, 300 connections that never start their handshake are
 * closed after the handshake's own time limit, and an HTTPS client is answered meanwhile.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { TLS_HANDSHAKE_TIMEOUT_MS } from '../../src/metrics/server.js';
import { tmpPath } from '../job-library/helpers.js';
import { type Served, startServe, writeConfig } from './helpers.js';

/** Sockets that hold a connection without a request: silent, or trickling header lines. */
class Attack {
  readonly #sockets = new Set<Socket>();
  #stopped = false;
  closedByServer = 0;

  constructor(
    readonly port: number,
    readonly silent: number,
    readonly trickling: number,
  ) {}

  async start(): Promise<void> {
    const opening: Promise<void>[] = [];
    for (let i = 0; i < this.silent; i++) opening.push(this.#open(false));
    for (let i = 0; i < this.trickling; i++) opening.push(this.#open(true));
    await Promise.all(opening);
  }

  #open(trickle: boolean): Promise<void> {
    return new Promise((resolve) => {
      if (this.#stopped) return resolve();
      const s = connect(this.port, '127.0.0.1');
      this.#sockets.add(s);
      let timer: NodeJS.Timeout | undefined;
      s.on('error', () => {});
      s.once('connect', () => {
        resolve();
        if (!trickle) return;
        s.write('POST /v1/spend HTTP/1.1\r\nHost: 127.0.0.1\r\n');
        timer = setInterval(() => s.write('X-Slow: 1\r\n'), 1_000);
      });
      s.once('close', () => {
        clearInterval(timer);
        this.#sockets.delete(s);
        if (this.#stopped) return;
        this.closedByServer++;
        // A slowloris connects again, a little later (bounded: the loop ends with the test).
        if (trickle) setTimeout(() => void this.#open(true), 50).unref();
      });
    });
  }

  get open(): number {
    return this.#sockets.size;
  }

  stop(): void {
    this.#stopped = true;
    for (const s of this.#sockets) s.destroy();
  }
}

async function get(url: string, path: string, dispatcher?: Agent): Promise<number> {
  const r = await request(`${url}${path}`, {
    ...(dispatcher ? { dispatcher } : {}),
    headersTimeout: 5_000,
    bodyTimeout: 5_000,
  });
  await r.body.text();
  return r.statusCode;
}

describe.each(['sqlite', 'redis'] as const)('serve on %s under slow clients', (kind) => {
  let served: Served | undefined;
  afterAll(async () => {
    await served?.stop();
  });

  it('answers /healthz, /metrics and spends while 500 silent and 300 trickling sockets come and go', async () => {
    const cred = `s${randomBytes(4).toString('hex')}`;
    served = await startServe(
      writeConfig({
        store: kind === 'redis' ? inject('redisUrl') : `sqlite:${tmpPath('slow-clients.db')}`,
        credentials: [{ id: cred }],
      }),
    );
    const url = served.url;
    const attack = new Attack(Number(new URL(url).port), 500, 300);
    await attack.start();
    const failures: string[] = [];
    let allowed = 0;
    let answered = 0;
    const started = Date.now();
    // Legitimate traffic for 6 s, each request on a connection of its own (as a cron job's first).
    try {
      while (Date.now() - started < 6_000) {
        const agent = new Agent({ connections: 1, pipelining: 1 });
        try {
          const [health, metrics, spend] = await Promise.all([
            get(url, '/healthz', agent),
            get(url, '/metrics'),
            request(`${url}/v1/spend`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ credential: cred, method: 'videos.list', tag: 'legit' }),
              headersTimeout: 5_000,
            }).then(async (r) => ({
              status: r.statusCode,
              body: (await r.body.json()) as { allowed: boolean },
            })),
          ]);
          answered += 3;
          if (health !== 200) failures.push(`/healthz ${health}`);
          if (metrics !== 200) failures.push(`/metrics ${metrics}`);
          if (spend.status !== 200) failures.push(`spend ${spend.status}`);
          if (spend.body.allowed) allowed++;
        } catch (e) {
          failures.push(String((e as { code?: string }).code ?? e));
        } finally {
          await agent.close();
        }
        await sleep(100);
      }
      expect(attack.open, 'the attack kept its sockets open').toBeGreaterThan(200);
    } finally {
      attack.stop();
    }
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(30);
    // The server made room by closing attackers, and says so.
    expect(attack.closedByServer).toBeGreaterThan(0);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/quota_guard_http_connections_closed_total\{why="shed"\} [1-9]/);
    const status = (await (await fetch(`${url}/v1/status?credential=${cred}`)).json()) as {
      credentials: Array<{ buckets: Array<{ id: string; used: number }> }>;
    };
    expect(status.credentials[0]!.buckets.find((b) => b.id === 'units')!.used).toBe(allowed);
  }, 60_000);
});

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

it.skipIf(!hasOpenssl())(
  'closes TLS connections that never start their handshake after its time limit, and answers HTTPS meanwhile',
  async () => {
    const cert = tmpPath('slow-cert.pem');
    const key = tmpPath('slow-key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
      ].concat([
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        cert,
      ]),
      { stdio: 'ignore' },
    );
    const served = await startServe(
      writeConfig({ store: `sqlite:${tmpPath('slow-tls.db')}`, credentials: [{ id: 'default' }] }),
      ['--tls-cert', cert, '--tls-key', key],
    );
    const attack = new Attack(Number(new URL(served.url).port), 300, 0);
    const agent = new Agent({ connect: { ca: readFileSync(cert) } });
    try {
      const opened = Date.now();
      await attack.start();
      const t0 = Date.now();
      expect(await get(served.url, '/healthz', agent)).toBe(200);
      expect(Date.now() - t0).toBeLessThan(3_000);
      // Node's default would hold them 120 s.
      while (attack.open > 0 && Date.now() - opened < TLS_HANDSHAKE_TIMEOUT_MS + 5_000) await sleep(100);
      expect(attack.open).toBe(0);
      expect(Date.now() - opened).toBeGreaterThanOrEqual(TLS_HANDSHAKE_TIMEOUT_MS - 500);
    } finally {
      attack.stop();
      await agent.close();
      await served.stop();
    }
  },
  40_000,
);
