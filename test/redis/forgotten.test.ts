/**
 * A handle on a Redis store that its job forgot to close does not keep the process alive: the
 * connection holds its sockets only while a command is in flight (src/redis/connection.ts). Each
 * case runs as a child process that does its work and never closes what it opened; it must exit
 * by itself (the time limit only catches one that does not), and nothing in flight is cut short.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { openLedger } from '../../src/ledger/index.js';
import { startProcess } from '../harness/child.js';
import { ROOT } from '../harness/imports.js';
import { redisServers } from '../harness/redis.js';
import { tempDir } from '../harness/temp.js';

const t = tempDir('qg-forgotten-');
afterAll(() => t.remove());
const src = (f: string) => JSON.stringify(pathToFileURL(join(ROOT, 'src', f)).href);
const LIMIT_MS = 20_000;

async function runForgetting(name: string, body: string) {
  const file = join(t.dir, `${name}.mts`);
  writeFileSync(
    file,
    `import { openLedger, openQuotaGuard, parseConfig } from ${src('index.ts')};
const prefix = ${JSON.stringify(`${inject('keyPrefix')}forgotten:${name}:`)};
const budgets = [{ key: 'qg:{f}:units', limit: 10, windowMs: 60_000 }];
${body}
`,
  );
  const r = await startProcess(process.execPath, ['--import', 'tsx', file], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'silent' },
    timeoutMs: LIMIT_MS,
  }).exited;
  return r;
}

/** It exited by itself (not killed at the time limit), with this output and nothing on stderr. */
function expectDone(r: Awaited<ReturnType<typeof runForgetting>>, stdout: string) {
  expect(r.signal, `still running after ${LIMIT_MS / 1000} s`).toBeNull();
  expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout, stderr: '' });
}

describe('a Redis handle its job forgot to close', () => {
  it('openQuotaGuard: the job spends, records a run, and the process exits', async () => {
    const r = await runForgetting(
      'qg',
      `const config = parseConfig({ store: { url: ${JSON.stringify(inject('redisUrl'))}, keyPrefix: prefix } }, { env: {} });
const qg = await openQuotaGuard(config);
const d = await qg.guard.spend({ credential: 'default', cost: 1, tier: 'manual' });
const run = await qg.run('forgetful', async (run) => { run.items = 1; });
console.log(d.allowed, run.outcome);`,
    );
    expectDone(r, 'true done\n');
  });

  it('a ledger on a Redis Cluster', async () => {
    const r = await runForgetting(
      'cluster',
      `const ledger = await openLedger(${JSON.stringify(inject('redisClusterUrl'))}, { keyPrefix: prefix });
console.log((await ledger.spend({ budgets, cost: 3 })).allowed);`,
    );
    expectDone(r, 'true\n');
  });

  it('a Redis that is down, opened anyway: the reconnect loop does not hold the process either', async () => {
    const r = await runForgetting(
      'down',
      `const ledger = await openLedger('redis://127.0.0.1:1', { keyPrefix: prefix, allowUnreachable: true });
const e = await ledger.spend({ budgets, cost: 1 }).catch((e) => e);
console.log(e.code);`,
    );
    expect(r.signal, `still running after ${LIMIT_MS / 1000} s`).toBeNull();
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 0, stdout: 'QG_STORE_UNAVAILABLE\n' });
  });

  it('a command in flight still holds the process until its answer', async () => {
    // Nothing awaits the spend: only the command in flight keeps the process alive for its answer.
    const r = await runForgetting(
      'inflight',
      `const ledger = await openLedger(${JSON.stringify(inject('redisUrl'))}, { keyPrefix: prefix });
setImmediate(() => {
  ledger.spend({ budgets, cost: 2 }).then((d) => console.log('answered', d.allowed));
});`,
    );
    expectDone(r, 'answered true\n');
  });

  const servers = redisServers();
  afterEach(() => servers.stopAll());

  it('calls while its server is gone add nothing to the dead socket (no listener piles up)', async () => {
    // Node defers ref()/unref() of a socket without a handle to a 'connect' listener each time.
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    const server = await servers.start();
    const ledger = await openLedger(server.url, { keyPrefix: `${inject('keyPrefix')}forgotten:gone:` });
    try {
      const budgets = [{ key: 'qg:{g}:units', limit: 10, windowMs: 60_000 }];
      expect((await ledger.spend({ budgets, cost: 1 })).allowed).toBe(true);
      await server.stop();
      // Past the client's noticing: it reconnects every 50 ms, and calls meet a dead socket.
      await new Promise((r) => setTimeout(r, 100));
      for (let round = 0; round < 10; round++) {
        const failed = await Promise.all(
          Array.from({ length: 30 }, () =>
            ledger.spend({ budgets, cost: 1 }).then(
              () => 'spent',
              (e: { code?: string }) => e.code,
            ),
          ),
        );
        expect(new Set(failed)).toEqual(new Set(['QG_STORE_UNAVAILABLE']));
      }
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await ledger.close();
    }
  });
});
