/**
 * Two releases side by side: 0.2.0, built from its commit (test/harness/previous-release.ts), and
 * this one, interleaved on one SQLite file and on one Redis. Spends from both CLIs, `status` and
 * `history` from both, both decision APIs (`serve --decisions`) at once, entries spent through one
 * and sent again through the other, this release's `record` and `void` read by 0.2.0, and `migrate`:
 * every command exits as it should, and the ledger's totals agree everywhere.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openLedger } from '../../src/index.js';
import { ApiClient, writeConfig } from '../api/helpers.js';
import { cli, quietCli } from '../cli/helpers.js';
import { BIN, startProcess } from '../harness/child.js';
import { type PreviousRelease, previousRelease } from '../harness/previous-release.js';
import { tmpPath } from '../job-library/helpers.js';

let prev: PreviousRelease;
beforeAll(() => {
  // Built once per machine (about a minute), then taken from the cache.
  prev = previousRelease();
}, 900_000);
quietCli();

const DAY = 86_400_000;
const KEY = 'qg:{main}:units';

/** 0.2.0's CLI, as its own process. */
async function old(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env, LOG_LEVEL: 'silent', QUOTA_GUARD_CONFIG: '' };
  return startProcess(process.execPath, [prev.bin, ...args], { env, timeoutMs: 60_000 }).exited;
}

/** `serve --decisions` of either release on a free loopback port. */
async function serve(
  cmd: string[],
  config: string,
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [...cmd, 'serve', '--config', config, '--http', '127.0.0.1:0', '--decisions'],
    {
      env: { ...process.env, LOG_LEVEL: 'info', QUOTA_GUARD_CONFIG: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = /decision API at (http:\/\/127\.0\.0\.1:\d+)\/v1\//.exec(stderr);
    if (m) {
      return {
        url: m[1]!,
        child,
        stop: async () => {
          if (child.exitCode === null) child.kill('SIGTERM');
          await exited;
        },
      };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`serve did not start: ${stderr}`);
    }
    await sleep(20);
  }
}

interface Status {
  credentials: Array<{ buckets: Array<{ id: string; used: number; key: string; windowMs: number }> }>;
}
const usedIn = (json: string) =>
  (JSON.parse(json) as Status).credentials[0]!.buckets.find((b) => b.id === 'units')!.used;

const STORES = [
  { name: 'one SQLite file', store: () => `sqlite:${tmpPath('two-releases.db')}`, prefix: undefined },
  {
    name: 'one Redis',
    store: () => inject('redisUrl'),
    prefix: () => `${inject('keyPrefix')}two-releases:${Math.random().toString(36).slice(2)}:`,
  },
] as const;

describe.each(STORES)('0.2.0 and this release on $name', (s) => {
  let config: string;
  let url: string;
  let keyPrefix: string | undefined;
  const servers: Array<{ stop(): Promise<void> }> = [];
  afterAll(async () => {
    await Promise.all(servers.map((x) => x.stop()));
  });

  it('spend, status, history and the decision API, interleaved: both work, and the totals agree', async () => {
    url = s.store();
    keyPrefix = s.prefix?.();
    config = writeConfig({
      store: keyPrefix === undefined ? url : { url, keyPrefix },
      credentials: [{ id: 'main', apiKeyEnv: 'QG_TWO_RELEASES_KEY' }],
    });
    let expected = 0;
    const agree = async (when: string) => {
      const a = await old('status', '--json', '--config', config);
      const b = await cli('status', '--json', '--config', config);
      expect([a.code, b.code], `${when}: ${a.stderr}${b.stderr}`).toEqual([0, 0]);
      expect([usedIn(a.stdout), usedIn(b.stdout)], when).toEqual([expected, expected]);
    };

    // The CLIs, one after the other.
    expect((await cli('spend', 'main', '--cost', '5', '--tag', 'new', '--config', config)).code).toBe(0);
    expect((await old('spend', 'main', '--cost', '7', '--tag', 'old', '--config', config)).code).toBe(0);
    expected += 12;
    await agree('after the CLIs');

    // Both decision APIs at once on the one store.
    const [o, n] = await Promise.all([serve([prev.bin], config), serve(['--import', 'tsx', BIN], config)]);
    servers.push(o, n);
    const apis = [new ApiClient(o.url), new ApiClient(n.url)] as const;
    const spend = (api: ApiClient, entry: string) =>
      api.spend({ credential: 'main', method: 'videos.list', tag: 'side', entry });
    for (let i = 0; i < 6; i++) {
      expect((await spend(apis[i % 2]!, `s${i}`)).body).toMatchObject({ allowed: true, replayed: false });
    }
    expected += 6;
    // Sent again through the other release: its first answer, charged once.
    for (let i = 0; i < 2; i++) {
      expect((await spend(apis[(i + 1) % 2]!, `s${i}`)).body).toMatchObject({
        allowed: true,
        replayed: true,
      });
    }

    // This release's late entries, read by 0.2.0: a recorded entry is a spend it answers again,
    // a voided one is one it never charges.
    expect((await spend(apis[1], 'probe')).body).toMatchObject({ allowed: true });
    expected += 1;
    const ledger = await openLedger(url, keyPrefix === undefined ? {} : { keyPrefix });
    try {
      const request = await ledger.recallEntry('qg:{main}:entry:probe');
      expect(request).toBeDefined();
      const budgets = [{ key: KEY, windowMs: DAY }];
      const at = (await ledger.peek({ key: KEY, windowMs: DAY })).now - 60_000;
      const entry = (id: string) => ({ key: `qg:{main}:entry:${id}`, id });
      const recorded = await ledger.record({
        budgets,
        cost: 1,
        tag: 'journal',
        entry: { ...entry('j1'), request: request! },
        at,
      });
      expect(recorded).toMatchObject({ outcome: 'recorded', at });
      expected += 1;
      expect(await ledger.void({ entry: entry('v1'), budgets })).toEqual({ outcome: 'voided', cost: 0 });
      expect((await spend(apis[0], 'j1')).body).toMatchObject({ allowed: true, replayed: true });
      // 0.2.0 takes the void of an entry it never saw for another request: refused, nothing charged.
      expect((await spend(apis[0], 'v1')).status).toBe(409);
      expect((await spend(apis[1], 'v1')).body).toMatchObject({ allowed: false, replayed: true });
      expect((await spend(apis[0], 'v2')).body).toMatchObject({ allowed: true });
      expect(await ledger.void({ entry: entry('v2'), budgets })).toEqual({ outcome: 'refunded', cost: 1 });
      expect((await spend(apis[0], 'v2')).body).toMatchObject({ allowed: false, replayed: true });
    } finally {
      await ledger.close();
    }
    await agree('after both APIs and the late entries');

    // A run recorded through each; both histories list both.
    const now = Date.now();
    for (const [i, api] of apis.entries()) {
      const r = await api.call('POST', '/v1/runs', {
        credential: 'main',
        id: `run-${i}`,
        job: `side:${i}`,
        startedAt: now - 5000,
        finishedAt: now - 1000,
        outcome: 'done',
        units: 3,
      });
      expect(r.status).toBe(200);
    }
    for (const h of [
      await old('history', '--json', '--config', config),
      await cli('history', '--json', '--config', config),
    ]) {
      expect(h.code, h.stderr).toBe(0);
      const jobs = (JSON.parse(h.stdout) as { runs: Array<{ job: string }> }).runs.map((r) => r.job).sort();
      expect(jobs).toEqual(['side:0', 'side:1']);
    }
    for (const api of apis) {
      const st = await api.call('GET', '/v1/status?credential=main');
      expect(st.status).toBe(200);
      expect(usedIn(JSON.stringify(st.body))).toBe(expected);
      await api.close();
    }
    await Promise.all([o.stop(), n.stop()]);

    // migrate finds nothing to change that 0.2.0 could not read, and 0.2.0 goes on after it.
    const dry = await cli('migrate', '--dry-run', '--config', config);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^ledger .*: (schema version 4|format 1), current: nothing to do$/m);
    expect((await cli('migrate', '--config', config)).code).toBe(0);
    expect((await old('spend', 'main', '--cost', '2', '--config', config)).code).toBe(0);
    expected += 2;
    await agree('after migrate');

    if (url.startsWith('sqlite:')) {
      const db = new Database(url.slice('sqlite:'.length), { readonly: true });
      expect(db.pragma('user_version', { simple: true })).toBe(4);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      db.close();
    }
  }, 240_000);
});
