/**
 * SIGTERM to a running `quota-guard fetch`: the page in flight is finished and written, the run
 * stops at the page boundary and the process exits 75 (run again later), with no half-written page.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCache } from '../../src/cache/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { secretKey, tmpPath } from '../job-library/helpers.js';
import { configFile } from './helpers.js';

let sim: Simulator;
const key = secretKey();

beforeAll(async () => {
  // Slow answers, so the signal lands while the job is mid-chart.
  sim = await startSimulator({ port: 0, faults: { latencyMs: 300 } });
});

afterAll(async () => {
  await sim?.close();
});

describe('signals', () => {
  it('SIGTERM ends a fetch at a page boundary with exit 75', { timeout: 60_000 }, async () => {
    const cache = tmpPath('cache.db');
    const file = configFile({
      store: `sqlite:${tmpPath('ledger.db')}`,
      cache: { path: cache },
      upstream: { baseUrl: sim.url },
      regions: ['US'],
    });
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(import.meta.dirname, '../../src/cli/bin.ts'),
        'fetch',
        '--json',
        '--config',
        file,
      ],
      {
        env: { PATH: process.env['PATH'] ?? '', YOUTUBE_API_KEY: key, LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    let signalled = false;
    child.stdout.on('data', (d) => {
      stdout += String(d);
    });
    child.stderr.on('data', (d) => {
      stderr += String(d);
      if (!signalled && stderr.includes('trending page written')) {
        signalled = true;
        child.kill('SIGTERM');
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    const code = await new Promise<number | null>((r) => child.on('close', r));
    clearTimeout(timer);
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
