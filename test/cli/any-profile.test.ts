/**
 * The tools for any profile: a config with no YouTube credential — docs/architecture.md's Drive
 * example and an API metered at 60 calls a minute — gets `status`, `status --json`, `plan`,
 * `history`, `serve`'s page and `/metrics` that exit 0 and speak of its own buckets only: no
 * regions, no freshness, no trending, no cache, no YouTube; `/metrics` says the healthy store is up.
 * (The alert rules name no bucket and are run over a 60-per-minute bucket in
 * deploy/prometheus/alerts.test.yml; the dashboard keeps the regions in a folded row.)
 */
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { openQuotaGuard } from '../../src/quota-guard.js';
import { BIN } from '../harness/child.js';
import { cli, configFile, sqliteStore } from './helpers.js';

/** Words of the YouTube application, which a page or a report for another API must not say. */
const YOUTUBE = /youtube|videos|trending|region|cache|freshness/i;

const PROFILES = {
  // docs/architecture.md, "How to guard another API", as a config file.
  drive: {
    credential: 'drive',
    method: 'files.list',
    bucket: 'queries',
    yaml: `profiles:
  drive-v3:
    description: 'Google Drive API v3: 12,000 queries per minute per project'
    timeZone: America/Los_Angeles
    defaultBucket: queries
    buckets: { queries: { quota: 12000 } }
    methods:
      files.list: { bucket: queries, cost: 1 }
      files.get: { bucket: queries, cost: 1 }
    upstreamNames: { queries: { displayName: Queries, limit: defaultPerMinutePerProject } }
credentials:
  - { id: drive, profile: drive-v3, apiKeyEnv: DRIVE_API_KEY, window: 1m, reserve: 2% }
`,
  },
  'sixty-a-minute': {
    credential: 'api',
    method: 'things.get',
    bucket: 'requests',
    yaml: `profiles:
  sixty:
    description: 'An API metered at 60 calls a minute'
    timeZone: UTC
    defaultBucket: requests
    buckets: { requests: { quota: 60 } }
    methods:
      things.get: { bucket: requests, cost: 1 }
      things.put: { bucket: requests, cost: 5 }
credentials:
  - { id: api, profile: sixty, apiKeyEnv: SIXTY_API_KEY, window: 1m, reserve: 0 }
`,
  },
} as const;

/** `quota-guard serve` on a free loopback port; its base URL, until `stop`. */
async function serve(config: string): Promise<{ url: string; stop(): Promise<number | null> }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', BIN, 'serve', '--config', config, '--http', '127.0.0.1:0'],
    { env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  const listening = () => /serving (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(stderr);
  let m = listening();
  for (; !m; m = listening()) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`serve did not start: ${stderr}`);
    }
    await sleep(20);
  }
  return {
    url: m[1]!,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The page as a person reads it: its text, without the style sheet and the markup. */
function visibleText(html: string): string {
  return html
    .replace(/<style>[\s\S]*?<\/style>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ');
}

for (const [name, p] of Object.entries(PROFILES)) {
  describe(`a config for another API: ${name}`, () => {
    let config: string;

    beforeAll(async () => {
      config = configFile(`store: "${sqliteStore()}"\n${p.yaml}`);
      const spend = await cli('spend', p.credential, '--method', p.method, '--config', config);
      expect(spend.code, spend.stderr).toBe(0);
      // A job of one's own, recorded in the run history as the library records it.
      await using qg = await openQuotaGuard(loadConfig({ file: config, env: {} }));
      await qg.run('nightly-sync', async (run) => {
        run.pages = 1;
        run.items = 3;
      });
    });

    it('status and status --json exit 0 and show its bucket, nothing of the application', async () => {
      const text = await cli('status', '--config', config);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toContain(`credential ${p.credential} `);
      expect(text.stdout).toMatch(new RegExp(`^ {2}${p.bucket}\\s+1\\s`, 'm'));
      expect(text.stdout).toMatch(/^now: nothing needs you/m);
      expect(text.stdout).not.toMatch(YOUTUBE);

      const json = await cli('status', '--json', '--config', config);
      expect(json.code, json.stderr).toBe(0);
      const view = JSON.parse(json.stdout) as Record<string, unknown>;
      expect(view).not.toHaveProperty('freshness');
      expect(view).not.toHaveProperty('cache');
      expect(json.stdout).not.toMatch(/youtube|videos|trending|freshness/i);
    });

    it('plan exits 0: no schedules, nothing of the application', async () => {
      const text = await cli('plan', '--config', config);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/no schedules/);
      expect(text.stdout).not.toMatch(YOUTUBE);
      const json = await cli('plan', '--json', '--config', config);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({ fits: true, schedules: false, buckets: [] });
    });

    it('history exits 0 and lists a job of its own in items', async () => {
      const text = await cli('history', '--config', config);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/^started\s+job\s+outcome\s+took\s+pages\s+units\s+items$/m);
      expect(text.stdout).toMatch(/nightly-sync\s+done\s+\S+\s+1\s+0\s+3$/m);
      expect(text.stdout).not.toMatch(YOUTUBE);
    });

    it('serve: the page answers 200 and /metrics says the store is up, with no application series', async () => {
      const s = await serve(config);
      try {
        const page = await fetch(`${s.url}/`);
        expect(page.status).toBe(200);
        const text = visibleText(await page.text());
        expect(text).toContain(`Credential ${p.credential}`);
        expect(text).toContain('nothing needs you');
        expect(text).toMatch(/nightly-sync done 1 page 0 units 3 items/);
        expect(text).not.toMatch(YOUTUBE);

        const metrics = await (await fetch(`${s.url}/metrics`)).text();
        expect(metrics).toMatch(/^quota_guard_ledger_up 1$/m);
        expect(metrics).toMatch(/^quota_guard_history_up 1$/m);
        expect(metrics).toContain(
          `quota_guard_units_used{credential="${p.credential}",bucket="${p.bucket}"} 1\n`,
        );
        const series = metrics.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
        expect(series.filter((l) => /region|trending|videos|cache|job="backfill"/.test(l))).toEqual([]);
        expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
      } finally {
        expect(await s.stop()).toBe(0);
      }
    });
  });
}
