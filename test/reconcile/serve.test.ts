/**
 * `serve --decisions` reconciles on `reconcile.schedule` (every 2 seconds here), its Google
 * credentials from the simulator's metadata server (GCE_METADATA_HOST), and `status --json` run as
 * another process reads the last reconcile from the store. A plain `serve` (it only reads) says it
 * does not reconcile. The credential's day is put in a zone where it is late morning now.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { configFile } from '../cli/helpers.js';
import { BIN, type Running, startProcess } from '../harness/child.js';
import { fileTempDir } from '../harness/temp.js';
import { lateMorningZone } from './zone.js';

const MIN = 60_000;
const temp = fileTempDir('qg-reconcile-serve-');
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ keys: ['k1@alpha'] });
});
afterAll(async () => {
  await sim.close();
});

const env = () => ({
  PATH: process.env.PATH ?? '',
  HOME: temp.path('home'),
  CLOUDSDK_CONFIG: temp.path('home'),
  QUOTA_GUARD_DATA: temp.path('data'),
  GCE_METADATA_HOST: `127.0.0.1:${sim.port}`,
  LOG_FORMAT: 'json',
  LOG_LEVEL: 'info',
});

function start(args: string[]): Running {
  return startProcess(process.execPath, ['--import', 'tsx', BIN, ...args], { env: env(), timeoutMs: 90_000 });
}

async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

it('serve --decisions reconciles on its schedule; status in another process shows it; serve alone does not', async () => {
  const at = Math.floor(Date.now() / MIN) * MIN - 60 * MIN;
  sim.clock.set(at + 5_000);
  sim.spendBehind('alpha', 'units', 25);
  sim.clock.set(Date.now());
  const cfg = configFile(
    [
      `store: "sqlite:${temp.path('quota.db')}"`,
      'credentials:',
      '  - id: default',
      '    project: alpha',
      `    timeZone: ${lateMorningZone()}`,
      'reconcile:',
      '  schedule: "*/2 * * * * *"',
      `  monitoring: { baseUrl: "${sim.origin}", deadline: 5s }`,
      '',
    ].join('\n'),
  );
  const serve = start(['serve', '--decisions', '--http', '127.0.0.1:0', '--config', cfg]);
  try {
    await until('a reconcile', () => /outside spend \+25 in units/.test(serve.stderr));
    const status = async () => {
      const run = start(['status', '--json', '--config', cfg]);
      const r = await run.exited;
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as {
        reconcile?: Array<{ project: string; success: { buckets: Array<Record<string, unknown>> } | null }>;
        summary: Array<{ text: string }>;
      };
    };
    const view = await status();
    expect(view.reconcile?.[0]?.project).toBe('alpha');
    expect(view.reconcile?.[0]?.success?.buckets).toContainEqual(
      expect.objectContaining({ bucket: 'units', upstream: 25, outside: 25, own: 0 }),
    );
    expect(view.summary.map((l) => l.text)).toContainEqual(
      expect.stringMatching(
        /^alpha: spent outside the guard since the upstream's midnight: 25 units in units/,
      ),
    );
  } finally {
    serve.child.kill('SIGTERM');
    await serve.exited;
  }
  // Without --decisions it only reads: it says it does not reconcile, and reads the last one.
  const plain = start(['serve', '--http', '127.0.0.1:0', '--config', cfg]);
  try {
    await until('its start', () => /not reconciling/.test(plain.stderr));
    expect(plain.stderr).not.toMatch(/reconciling with the upstream's count on/);
  } finally {
    plain.child.kill('SIGTERM');
    await plain.exited;
  }
}, 120_000);
