/**
 * Nothing unrecorded through the service's outages: a PHP job and a Python job spend run after run
 * through a real `serve --decisions` while it is restarted gracefully twice (SIGTERM, then started
 * again on the same port), killed once (SIGKILL) and stopped for 10 s (SIGSTOP) — on Redis and on
 * SQLite. Afterwards the units the ledger holds are the units the simulator charged, every run is in
 * the history, and no client call took longer than its deadline.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { openLedger } from '../../src/index.js';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { tmpPath } from '../job-library/helpers.js';
import { CLIENT_DIR, drive, journalDir, journalLines, type Lang } from './drivers.js';
import { historyRuns, type Served, startServe, tokensFile, writeConfig } from './helpers.js';
import { closedPort } from './proxies.js';

const DAY = 86_400_000;
/** Each client call's deadline in the jobs (s): the 10 s stop is far longer. */
const DEADLINE = 3;

interface JobSummary {
  runs: number;
  slowest: { ms: number; call: string | null };
  reasons: Record<string, number>;
}

function startJob(
  lang: Lang,
  env: Record<string, string>,
): { done: Promise<JobSummary>; child: ChildProcess } {
  const [cmd, script] =
    lang === 'python'
      ? ['python3', join(import.meta.dirname, 'drivers/job.py')]
      : ['php', join(import.meta.dirname, 'drivers/job.php')];
  let child!: ChildProcess;
  const done = new Promise<JobSummary>((resolve, reject) => {
    child = execFile(
      cmd,
      [script],
      { env: { PATH: process.env['PATH'] ?? '', QG_CLIENT_DIR: CLIENT_DIR[lang], ...env }, timeout: 180_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${lang} job: ${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as JobSummary);
      },
    );
  });
  return { done, child };
}

async function outage(store: string): Promise<void> {
  const cred = `out${randomBytes(4).toString('hex')}`;
  const sim: Simulator = await startSimulator({ port: 0 });
  const ledger = await openLedger(store);
  const t = tokensFile([
    { name: 'py-job', credentials: [cred] },
    { name: 'php-job', credentials: [cred] },
  ]);
  const config = writeConfig({
    store,
    upstream: { baseUrl: sim.url },
    credentials: [{ id: cred, apiKeyEnv: 'QG_OUTAGE_TEST_KEY' }],
  });
  const buckets = Object.values(loadConfig({ file: config, env: {} }).credential(cred).buckets);
  const recorded = async () => {
    let sum = 0;
    for (const b of buckets) sum += (await ledger.peek({ key: `qg:{${cred}}:${b.id}`, windowMs: DAY })).used;
    return sum;
  };
  const listen = `127.0.0.1:${await closedPort()}`;
  const url = `http://${listen}`;
  const serve = () => startServe(config, ['--tokens', t.file], {}, listen);
  let served: Served = await serve();
  const journal = join(journalDir(), 'journal.jsonl');
  const stop = tmpPath(`stop-${cred}`);
  const env = (lang: Lang): Record<string, string> => ({
    QG_URL: url,
    QG_TOKEN: t.secrets[lang === 'python' ? 'py-job' : 'php-job']!,
    QG_CREDENTIAL: cred,
    QG_PREFIX: lang,
    QG_SIM: sim.url,
    QG_STOP: stop,
    QG_DEADLINE: String(DEADLINE),
    QUOTA_GUARD_JOURNAL: journal,
  });
  const charged = sim.charged();
  const before = await recorded();
  const jobs = { python: startJob('python', env('python')), php: startJob('php', env('php')) };
  try {
    await sleep(2_000);
    // A graceful restart: SIGTERM, and the new process started on the same port.
    await served.stop();
    served = await serve();
    await sleep(2_000);
    // A crash: SIGKILL mid-request, started again a second later.
    served.child.kill('SIGKILL');
    await served.stop();
    await sleep(1_000);
    served = await serve();
    await sleep(2_000);
    // A hang: stopped for 10 s with requests in flight, then let go.
    served.child.kill('SIGSTOP');
    await sleep(10_000);
    served.child.kill('SIGCONT');
    await sleep(2_000);
    await served.stop();
    served = await serve();
    await sleep(2_000);
  } finally {
    writeFileSync(stop, '');
    served.child.kill('SIGCONT');
  }
  const py = await jobs.python.done;
  const php = await jobs.php.done;
  try {
    // Whatever the jobs' last replay left (a line sent as the service went away) goes now.
    for (const lang of ['python', 'php'] as const) {
      await drive(lang, { url, token: env(lang)['QG_TOKEN']!, journal }, [{ do: 'replay' }]);
    }
    expect(journalLines(journal)).toEqual([]);
    for (const job of [py, php]) {
      expect(job.runs).toBeGreaterThan(20);
      // Through the stop and the restarts some spends went without an answer: journalled, not lost.
      expect(
        (job.reasons['fail-open'] ?? 0) + (job.reasons['unknown'] ?? 0),
        JSON.stringify(job),
      ).toBeGreaterThan(0);
      // Within its deadline; the slack is the process's own scheduling on a busy machine.
      expect(job.slowest.ms, JSON.stringify(job)).toBeLessThan(DEADLINE * 1000 + 2000);
    }
    expect((await recorded()) - before).toBe(sim.charged() - charged);
    expect(sim.charged() - charged).toBeGreaterThan(20);
    const runs = await historyRuns(config, '--credential', cred, '--limit', '1000');
    for (const [prefix, job] of [
      ['python', py],
      ['php', php],
    ] as const) {
      const names = runs.filter((r) => r.job.startsWith(`${prefix}:`)).map((r) => r.job);
      expect(new Set(names).size, prefix).toBe(job.runs);
      expect(names).toHaveLength(job.runs);
    }
  } finally {
    await served.stop();
    await ledger.close();
    await sim.close();
  }
  expect(existsSync(stop)).toBe(true);
}

describe('the PHP and Python clients through restarts, a crash and a hang of serve', () => {
  // About 30 s each: the 10 s stop, four starts of serve and the jobs' last calls.
  it('on Redis: recorded = charged, every run in the history, no call past its deadline', {
    timeout: 120_000,
  }, async () => {
    await outage(inject('redisUrl'));
  });

  it('on SQLite: the same', { timeout: 120_000 }, async () => {
    await outage(`sqlite:${tmpPath('outage-ledger.db')}`);
  });
});
