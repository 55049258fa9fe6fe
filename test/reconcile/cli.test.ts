/**
 * `quota-guard reconcile` as an operator runs it: a separate process that finds its Google
 * credentials by Application Default Credentials, through the simulator's metadata server
 * (GCE_METADATA_HOST), and reads the simulator's Cloud Monitoring. The credential's day is put in a
 * time zone where it is late morning now, so the day has hours behind it whatever the date.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { cli, configFile, expectOneLine } from '../cli/helpers.js';
import { BIN, startProcess } from '../harness/child.js';
import { fileTempDir } from '../harness/temp.js';
import { lateMorningZone } from './zone.js';

const MIN = 60_000;
const temp = fileTempDir('qg-reconcile-cli-');
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ keys: ['k1@alpha'] });
});
afterAll(async () => {
  await sim.close();
});

function config(extra = ''): string {
  return configFile(
    [
      `store: "sqlite:${temp.path('quota.db')}"`,
      'credentials:',
      '  - id: default',
      '    project: alpha',
      `    timeZone: ${lateMorningZone()}`,
      'reconcile:',
      `  monitoring: { baseUrl: "${sim.origin}", deadline: 2s }`,
      extra,
      '',
    ].join('\n'),
  );
}

/** The CLI in a process of its own, its Google credentials from the simulator's metadata server. */
async function reconcile(args: string[], env: Record<string, string> = {}) {
  const home = temp.path('home');
  const run = startProcess(process.execPath, ['--import', 'tsx', BIN, 'reconcile', ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      CLOUDSDK_CONFIG: home,
      QUOTA_GUARD_DATA: temp.path('data'),
      GCE_METADATA_HOST: `127.0.0.1:${sim.port}`,
      LOG_LEVEL: 'error',
      ...env,
    },
    timeoutMs: 60_000,
  });
  return run.exited;
}

describe('quota-guard reconcile', () => {
  it('finds its credentials by ADC, records what the ledger did not see, and says so', async () => {
    const at = Math.floor(Date.now() / MIN) * MIN - 60 * MIN;
    sim.clock.set(at + 5_000);
    sim.spendBehind('alpha', 'units', 25);
    sim.clock.set(Date.now());
    const cfg = config();
    const first = await reconcile(['--config', cfg]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^alpha \(default\): reconciled up to \d\d:\d\d UTC \(1 read\)/);
    expect(first.stdout).toMatch(/units\s+25\s+25\s+0\s+25\s+\+25/);

    const again = await reconcile(['--config', cfg, '--json']);
    expect(again.code).toBe(0);
    const json = JSON.parse(again.stdout) as {
      ok: boolean;
      projects: Array<{
        project: string;
        buckets: Array<{ bucket: string; outside: number; added: number }>;
      }>;
    };
    expect(json.ok).toBe(true);
    expect(json.projects[0]!.buckets.find((b) => b.bucket === 'units')).toMatchObject({
      outside: 25,
      added: 0,
    });
  }, 120_000);

  it('says a missing role in one line, exits 78, and records nothing', async () => {
    sim.monitoring.setFaults({ forbidden: true });
    try {
      const r = await reconcile(['--config', config()]);
      expect(r.code).toBe(78);
      expectOneLine(r.stderr, /roles\/monitoring\.viewer.*\(QG_RECONCILE_FORBIDDEN\)$/);
      expect(r.stdout).toMatch(/alpha \(default\): not reconciled: QG_RECONCILE_FORBIDDEN; nothing recorded/);
    } finally {
      sim.monitoring.clearFaults();
    }
  }, 120_000);

  it('exits 69 when the answer is cut short', async () => {
    sim.monitoring.setFaults({ truncate: true });
    try {
      const r = await reconcile(['--config', config()]);
      expect(r.code).toBe(69);
      expectOneLine(r.stderr, /\(QG_UPSTREAM_(TRANSPORT|BAD_RESPONSE)\)$/);
    } finally {
      sim.monitoring.clearFaults();
    }
  }, 120_000);

  it('exits 78 in one line when no credential names a project, or the key file is missing', async () => {
    const none = await cli('reconcile', '--config', configFile('credentials: [{ id: default }]\n'));
    expect(none.code).toBe(78);
    expectOneLine(none.stderr, /no credential names its Google Cloud project.*\(QG_CONFIG_INVALID\)$/);

    const missing = await cli(
      'reconcile',
      '--config',
      config(`  auth: { keyFile: "${temp.path('none.json')}" }`),
    );
    expect(missing.code).toBe(78);
    expectOneLine(missing.stderr, /none\.json: the key file does not exist \(QG_RECONCILE_AUTH\)$/);
  });
});
