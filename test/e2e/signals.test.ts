/**
 * SIGTERM to a running `quota-guard fetch`: the run stops at once — a page fully received is
 * written, a request still in flight (an upstream that drips) is abandoned and counted as charged —
 * and the process exits 75 (run again later), with no half-written page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotaStatus } from '../../src/guard/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { openCache } from '../../src/youtube/cache/index.js';
import { loadYouTubeConfig as loadConfig } from '../../src/youtube/config/part.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { secretKey, tmpPath } from '../job-library/helpers.js';
import { drip, httpServer } from '../upstream/helpers.js';
import { configFile, startChild } from './helpers.js';

let sim: Simulator;
const key = secretKey();

beforeAll(async () => {
  // Slow answers, so the signal lands while the job is mid-chart.
  sim = await startSimulator({ port: 0, faults: { latencyMs: 300 } });
});

afterAll(async () => {
  await sim?.close();
});

/** `quota-guard fetch --json` in a child process, logging at info (each page written is a line). */
function startFetch(file: string) {
  return startChild(
    ['fetch', '--json', '--config', file],
    { YOUTUBE_API_KEY: key, LOG_LEVEL: 'info' },
    50_000,
  );
}

describe('signals', () => {
  it('SIGTERM ends a fetch at a page boundary with exit 75', { timeout: 60_000 }, async () => {
    const cache = tmpPath('cache.db');
    const file = configFile({
      store: `sqlite:${tmpPath('ledger.db')}`,
      cache: { path: cache },
      upstream: { baseUrl: sim.url },
      regions: ['US'],
    });
    const run = startFetch(file);
    let signalled = false;
    run.child.stderr.on('data', () => {
      if (!signalled && run.stderr.includes('trending page written')) {
        signalled = true;
        run.child.kill('SIGTERM');
      }
    });
    const { code, stdout, stderr } = await run.exited;
    expect(signalled).toBe(true);
    expect(code).toBe(75);
    const [result] = JSON.parse(stdout) as Array<{ outcome: string; pages: number; videos: number }>;
    expect(result).toMatchObject({ outcome: 'aborted' });
    expect(result!.pages).toBeGreaterThanOrEqual(1);
    expect(result!.pages).toBeLessThan(4);
    const c = openCache(cache);
    try {
      expect(c.latestSnapshot('US')?.videos).toHaveLength(result!.videos);
      expect(result!.videos).toBe(result!.pages * 50);
    } finally {
      c.close();
    }
    expect(stderr).not.toContain(key);
  });
});

describe('signals against an upstream that drips', () => {
  it('SIGTERM ends a request in flight at once: exit 75, charged, nothing half-written', {
    timeout: 60_000,
  }, async () => {
    // Headers at once, then a byte every 500 ms: no gap trips the body timeout, and the deadline is far.
    const upstream = await httpServer(drip(500));
    try {
      const cache = tmpPath('cache.db');
      const ledger = tmpPath('ledger.db');
      const file = configFile({
        store: `sqlite:${ledger}`,
        cache: { path: cache },
        upstream: { baseUrl: upstream.url, timeout: '10s', deadline: '10m' },
        regions: ['US'],
      });
      const run = startFetch(file);
      // Wait (bounded) until the request is in flight, then a while longer, so it is mid-drip.
      for (let i = 0; i < 400 && upstream.hits === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(upstream.hits).toBe(1);
      await new Promise((r) => setTimeout(r, 1_200));
      const signalled = performance.now();
      run.child.kill('SIGTERM');
      const { code, stdout, stderr } = await run.exited;
      const ms = performance.now() - signalled;
      expect(code, stderr).toBe(75);
      // Generous: only a run that waits for the drip (or the deadline) fails this.
      expect(ms).toBeLessThan(20_000);
      const [result] = JSON.parse(stdout) as Array<{ outcome: string; pages: number; units: number }>;
      expect(result).toMatchObject({ outcome: 'aborted', pages: 0, units: 1 });

      // The ledger holds exactly the one charged request; the cache holds no page of it.
      const config = loadConfig({ file, env: { YOUTUBE_API_KEY: key } });
      const l = await openLedger(config.store.url);
      try {
        const status = await quotaStatus(config, l);
        expect(status.credentials[0]!.buckets.find((b) => b.id === 'units')!.used).toBe(1);
      } finally {
        await l.close();
      }
      const c = openCache(cache);
      try {
        expect(c.latestSnapshot('US')).toBeUndefined();
      } finally {
        c.close();
      }
      expect(stderr).not.toContain(key);
    } finally {
      await upstream.close();
    }
  });

  it('a second signal ends the process at once with the shell status of that signal', async () => {
    const { abortOnSignals } = await import('../../src/runs/job-run.js');
    const forced: string[] = [];
    const { signal, dispose } = abortOnSignals((s) => forced.push(s));
    try {
      process.emit('SIGTERM', 'SIGTERM');
      expect(signal.aborted).toBe(true);
      expect(forced).toEqual([]);
      process.emit('SIGINT', 'SIGINT');
      expect(forced).toEqual(['SIGINT']);
    } finally {
      dispose();
    }
  });
});
