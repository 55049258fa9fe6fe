/** `quota-guard simulate` as a separate process, driven over HTTP like a drill would. */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { simulatorControl } from '../../src/youtube/simulator/index.js';
import { createYouTubeClient, UpstreamError } from '../../src/youtube/upstream/index.js';
import { expectOneLine } from '../cli/helpers.js';

const BIN = fileURLToPath(new URL('../../src/cli/bin.ts', import.meta.url));
const children: ChildProcess[] = [];

function run(args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', BIN, 'simulate', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c) => {
    stdout += String(c);
  });
  child.stderr!.on('data', (c) => {
    stderr += String(c);
  });
  const exited = once(child, 'exit').then(([code]) => code as number);
  return {
    child,
    exited,
    out: () => stdout,
    err: () => stderr,
    /** Resolves with the printed base URL. */
    url: async (): Promise<string> => {
      for (let i = 0; i < 300; i++) {
        const m = /simulator: (http:\/\/\S+\/youtube\/v3)/.exec(stdout);
        if (m) return m[1]!;
        if (child.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`no URL printed; stdout: ${stdout} stderr: ${stderr}`);
    },
  };
}

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

describe('quota-guard simulate', () => {
  it('prints its URL, serves the API and the control endpoint, and stops cleanly on SIGINT', async () => {
    const p = run([
      '--port',
      '0',
      '--key',
      'cli-key@proj',
      '--quota',
      '3',
      '--bucket',
      'search.list=1',
      '--seed',
      's1',
    ]);
    const url = await p.url();
    expect(p.out()).toContain('/_sim');
    expect(p.out()).not.toContain('cli-key');
    const client = createYouTubeClient({ baseUrl: url, apiKey: 'cli-key' });
    try {
      const page = await client.videosListChart({ regionCode: 'US' });
      expect(page.items).toHaveLength(50);
      await client.searchList({ q: 'music' });
      const e = await client.searchList({ q: 'music' }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(UpstreamError);
      expect((e as UpstreamError).code).toBe('QG_UPSTREAM_QUOTA_EXCEEDED');
      const ctl = simulatorControl(url);
      await ctl.spendBehind('proj', 'units', 2);
      const stats = await ctl.stats();
      expect(stats.projects.proj!.units).toMatchObject({ quota: 3, used: 3, charged: 1, spentBehind: 2 });
      expect(stats.projects.proj!['search.list']).toMatchObject({ quota: 1, charged: 2 });
      expect(stats.seed).toBe('s1');
    } finally {
      await client.close();
    }
    p.child.kill('SIGINT');
    expect(await p.exited).toBe(0);
    expect(p.out()).toContain('stopped');
  }, 60_000);

  it('reports a bad bucket and a bad rate as one line each with their exit codes', async () => {
    const bucket = run(['--port', '0', '--bucket', 'nope=5']);
    expect(await bucket.exited).toBe(78);
    expectOneLine(bucket.err(), /buckets\.nope: .*\(QG_UNKNOWN_BUCKET\)$/);
    const rate = run(['--port', '0', '--error-rate', '2']);
    expect(await rate.exited).toBe(64);
    expectOneLine(rate.err(), /--error-rate/);
  }, 60_000);
});
