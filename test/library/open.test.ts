/**
 * `openQuotaGuard(config)`: the library spends from the same budget the CLI reads (the config's key
 * prefix kept), and runs made in-process show in the run history.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openQuotaGuard } from '../../src/quota-guard.js';
import { loadYouTubeConfig as loadConfig } from '../../src/youtube/config/part.js';
import { openJobContext } from '../../src/youtube/job-library/context.js';
import { runTrending } from '../../src/youtube/job-library/trending.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { cli, configFile, dir } from '../cli/helpers.js';
import { capture } from '../guard/helpers.js';

const PER_DAY = readFileSync(
  new URL('../fixtures/youtube/429-search-list-per-day.json', import.meta.url),
  'utf8',
);

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});
afterAll(async () => {
  await sim?.close();
});

let n = 0;
function stores(): Array<{ name: string; yaml: () => string }> {
  return [
    {
      name: 'redis',
      yaml: () => `store:\n  url: ${inject('redisUrl')}\n  keyPrefix: "${inject('keyPrefix')}lib${n++}:"\n`,
    },
    {
      name: 'sqlite',
      yaml: () => `store:\n  url: sqlite:${join(dir, `lib${n++}.db`)}\n  keyPrefix: "trial:"\n`,
    },
  ];
}

function yamlFor(store: string): string {
  return `${store}cache:\n  path: ${join(dir, `libcache${n++}.db`)}\nupstream:\n  baseUrl: ${sim.url}\ncredentials:\n  - id: default\n    apiKeyEnv: QG_LIB_KEY\n`;
}

describe.each(stores())('openQuotaGuard ($name)', ({ yaml }) => {
  it('spends from the budget status reads: one budget under the configured key prefix', async () => {
    const file = configFile(yamlFor(yaml()));
    const config = loadConfig({ file, env: {} });
    {
      await using qg = await openQuotaGuard(config, { logger: capture() });
      for (let i = 0; i < 3; i++) {
        expect((await qg.guard.spend({ credential: 'default', method: 'videos.list' })).allowed).toBe(true);
      }
      expect((await qg.status()).credentials[0]!.buckets.find((b) => b.id === 'units')!.used).toBe(3);
    }
    const json = JSON.parse((await cli('status', '--json', '--config', file)).stdout) as {
      credentials: Array<{ buckets: Array<{ id: string; used: number }> }>;
    };
    expect(json.credentials[0]!.buckets.find((b) => b.id === 'units')!.used).toBe(3);
  });

  it('records an in-process trending run and a run of your own in the history', async () => {
    const file = configFile(yamlFor(yaml()));
    const config = loadConfig({ file, env: { QG_LIB_KEY: 'lib-test-key' } });
    {
      await using qg = await openQuotaGuard(config, { logger: capture() });
      await using jobs = openJobContext(qg);
      const r = await runTrending(jobs, { region: 'US', maxPages: 1 });
      expect(r.outcome).toBe('done');
      const own = await qg.run('ingest:comments', async (run) => {
        const got = await run.call({ method: 'videos.list' }, async () => 'page');
        run.pages++;
        run.items += 7;
        return got.ok ? got.value : undefined;
      });
      expect(own).toMatchObject({
        job: 'ingest:comments',
        outcome: 'done',
        units: 1,
        pages: 1,
        value: 'page',
      });
      await expect(
        qg.run('ingest:broken', async () => {
          throw new Error('the user’s own bug');
        }),
      ).rejects.toThrow('the user’s own bug');
      // A name the history cannot keep is refused before anything runs or is recorded.
      for (const name of ['', 'a|b', 'two\nlines', 'n'.repeat(101)]) {
        await expect(qg.run(name, async () => 'never')).rejects.toMatchObject({
          code: 'QG_INVALID_ARGUMENT',
          field: 'name',
        });
      }
    }
    const out = await cli('history', '--json', '--config', file);
    expect(out.code).toBe(0);
    const runs = (JSON.parse(out.stdout) as { runs: Array<Record<string, unknown>> }).runs;
    expect(runs.map((r) => r['job']).sort()).toEqual(['ingest:broken', 'ingest:comments', 'trending:US']);
    expect(runs.find((r) => r['job'] === 'ingest:comments')).toMatchObject({
      outcome: 'done',
      units: 1,
      videos: 7,
    });
    expect(runs.find((r) => r['job'] === 'ingest:broken')).toMatchObject({ outcome: 'failed' });
    expect(runs.find((r) => r['job'] === 'trending:US')).toMatchObject({ outcome: 'done', pages: 1 });
  });

  it('ends a run of your own as stopped when its fetch meets a per-day 429, and records it', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json' }).end(PER_DAY);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/search`;
    const file = configFile(yamlFor(yaml()));
    try {
      const qg = await openQuotaGuard(loadConfig({ file, env: {} }), { logger: capture() });
      try {
        const run = await qg.run('ingest:search', async (run) => {
          for (let i = 0; i < 3; i++) {
            const r = await run.fetch({ method: 'search.list' }, url);
            if (!r.ok) return r.reason;
          }
          return 'went on';
        });
        expect(run).toMatchObject({ outcome: 'stopped', exitCode: 75, units: 1, value: 'upstream-quota' });
        expect(run.resumeAt).toBeGreaterThan(Date.now());
      } finally {
        await qg.close();
      }
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
    const runs = (
      JSON.parse((await cli('history', '--json', '--config', file)).stdout) as {
        runs: Array<Record<string, unknown>>;
      }
    ).runs;
    expect(runs).toEqual([expect.objectContaining({ job: 'ingest:search', outcome: 'stopped', units: 1 })]);
  });
});
