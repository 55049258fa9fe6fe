/**
 * `drill --mixed`: the drill's day with outside spenders. Two `quota-guard serve --decisions`
 * instances over the drill's store, and a PHP and a Python cron job (clients/drill/cron.{php,py},
 * child processes) spending about an eighth of the day's units through both URLs, run after run,
 * beside the Node jobs: spend, call the simulator with a key of their own, settle, record the run.
 * Instance A is killed (SIGKILL) at half the day and started again 0.05 of the day later; instance
 * B is restarted gracefully (SIGTERM, then started again) at 0.75.
 *
 * At the day's end the jobs stop, replay what their journals hold, and say what they did; the drill
 * then reads the run history and checks that every run they made is in it and that their journals
 * are empty. Their spends are in the simulator's charge and the ledger's record, so the drill's
 * `chargedEqualsRecorded` counts every spender (someone else's spend behind the guard aside).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../errors.js';
import { openRunHistory } from '../history/history.js';
import { openQuotaGuard } from '../quota-guard.js';
import type { ClientLang, DrillClient, DrillInstance, DrillMixed } from './mixed-types.js';
import { CREDENTIAL, drillConfig, KEY_ENV, PROJECT } from './setup.js';
import type { Day, DaySettings, DrillCheck, DrillOptions } from './types.js';

/** The package's root: two levels below it are src/drill, dist/drill and dist/cli-chunks alike. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const BIN = fileURLToPath(new URL(`../cli/bin.${FROM_SOURCE ? 'ts' : 'js'}`, import.meta.url));

const CLIENT_LANGS = ['php', 'python'] as const satisfies readonly ClientLang[];

/** Each client call's deadline in the jobs (s). */
const DEADLINE_S = 3;
/** Runs each job aims at in a day. */
const RUNS_PER_DAY = 48;

/**
 * php (with curl) and python3 (3.8 or later), or a ConfigError naming what to install (exit 78):
 * checked before the day starts.
 */
export function checkInterpreters(): void {
  const problems: string[] = [];
  const php = spawnSync('php', ['-r', 'echo extension_loaded("curl") ? "curl" : "none";'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (php.error !== undefined || php.status !== 0)
    problems.push(
      'drill --mixed runs a PHP cron job: php was not found (install php-cli and php-curl, e.g. apt-get install php-cli php-curl)',
    );
  else if (php.stdout.trim() !== 'curl')
    problems.push(
      'drill --mixed runs a PHP cron job: php has no curl extension (install php-curl, e.g. apt-get install php-curl)',
    );
  const py = spawnSync('python3', ['-c', 'import sys; print(sys.version_info >= (3, 8))'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (py.error !== undefined || py.status !== 0)
    problems.push(
      'drill --mixed runs a Python cron job: python3 was not found (install python3, 3.8 or later, e.g. apt-get install python3)',
    );
  else if (py.stdout.trim() !== 'True')
    problems.push('drill --mixed runs a Python cron job: python3 is older than 3.8 (install 3.8 or later)');
  if (problems.length > 0) throw new ConfigError(problems);
}

/** A mixed day being prepared: the simulator keys are known before the simulator starts. */
export interface Mixed {
  /** The day's options: its store, and on Redis its key prefix, fixed for the instances. */
  dayOptions: DrillOptions;
  /** Keys for the simulator's `keys` option (`K@project`), one per job. */
  simulatorKeys: string[];
  /** Starts the instances and the jobs, and schedules the crash and the restart. */
  start(day: Day, stopAt: number): Promise<void>;
  /** Stops the jobs, waits for their journals, reads the history. */
  finish(day: Day): Promise<{ report: DrillMixed; checks: DrillCheck[] }>;
  /** Stops the instances (SIGTERM), and kills a job still running (a drill that failed). */
  close(): Promise<void>;
}

export function prepareMixed(
  s: DaySettings,
  options: DrillOptions,
  dir: string,
  timers: NodeJS.Timeout[],
): Mixed {
  checkInterpreters();
  const keys = Object.fromEntries(
    CLIENT_LANGS.map((lang) => [lang, `drill-${lang}-${randomBytes(6).toString('hex')}`]),
  ) as Record<ClientLang, string>;
  const secrets = Object.fromEntries(
    CLIENT_LANGS.map((lang) => [lang, randomBytes(18).toString('base64url')]),
  ) as Record<ClientLang, string>;
  const stopFile = join(dir, 'clients-stop');
  const instances: Serve[] = [];
  const jobs: Job[] = [];
  const pending: Array<Promise<void>> = [];
  let started: { day: Day; urls: string[] } | undefined;
  // The store, and on Redis the key prefix, are fixed now, so that the instances start while the
  // cache is seeded (a start takes seconds on a busy machine), not in the day.
  const store = options.store ?? `sqlite:${join(dir, 'ledger.db')}`;
  const redis = /^redis/.test(store);
  const dayOptions: DrillOptions = {
    ...options,
    store,
    ...(redis ? { keyPrefix: options.keyPrefix ?? `qg-drill:${Date.now().toString(36)}:` } : {}),
  };
  // Times are fractions of the day once it has started (an instance may answer before it does).
  let fraction = (_at: number) => 0;
  const boot = async () => {
    const configFile = join(dir, 'serve-config.yaml');
    // JSON is YAML: the day's config as `serve` reads a file (its own cache file: the day's is
    // being seeded; the upstream is never called by serve).
    const probe = drillConfig({
      daySeconds: s.daySeconds,
      profile: s.profile,
      quota: s.quota,
      maxPages: s.maxPages,
      store,
      ...(dayOptions.keyPrefix !== undefined ? { keyPrefix: dayOptions.keyPrefix } : {}),
      regions: s.regions,
      cachePath: join(dir, 'serve-cache.db'),
      baseUrl: 'http://127.0.0.1:1/youtube/v3',
      key: 'unused-by-serve',
    });
    writeFileSync(configFile, JSON.stringify(probe.document, null, 2));
    // serve never creates a SQLite ledger: the first job does; this one is created now.
    if (!redis) await (await openQuotaGuard(probe.config, { history: false, journal: false })).close();
    const tokensFile = join(dir, 'tokens.yaml');
    writeFileSync(
      tokensFile,
      JSON.stringify({
        tokens: CLIENT_LANGS.map((lang) => ({
          name: tokenName(lang),
          sha256: createHash('sha256').update(secrets[lang]).digest('hex'),
          credentials: [CREDENTIAL],
          mayBlock: true,
        })),
      }),
    );
    const env = { ...process.env, [KEY_ENV]: 'unused-by-serve', LOG_LEVEL: 'info' };
    const args = ['--config', configFile, '--decisions', '--tokens', tokensFile];
    for (const name of ['A', 'B'] as const) {
      const port = await freePort();
      instances.push(new Serve(name, `127.0.0.1:${port}`, args, env, (at) => fraction(at)));
    }
    await Promise.all(instances.map((i) => i.start()));
  };
  const booted = boot();
  booted.catch(() => undefined);

  return {
    simulatorKeys: CLIENT_LANGS.map((lang) => `${keys[lang]}@${PROJECT}`),

    dayOptions,

    async start(day, stopAt) {
      fraction = day.fraction;
      await booted;
      const urls = instances.map((i) => i.url);
      started = { day, urls };
      s.progress(
        `serve A at ${urls[0]}, B at ${urls[1]}; the simulator at ${day.sim.url}, keys ${CLIENT_LANGS.map((l) => `${l} ${keys[l]}`).join(', ')}`,
      );

      // About an eighth of the day's units between the two jobs, in runs of a few pages.
      const cost = day.setup.credential.methods['videos.list']?.cost ?? 1;
      const spends = Math.max(1, Math.round(s.quota / 16 / cost));
      const pages = Math.max(1, Math.round(spends / RUNS_PER_DAY));
      const intervalMs = Math.max(50, Math.floor((stopAt - Date.now()) / Math.ceil(spends / pages)));
      const { t0, dayMs } = day;
      CLIENT_LANGS.forEach((lang, i) => {
        const order = i === 0 ? urls : [...urls].reverse();
        const home = join(dir, `home-${lang}`);
        mkdirSync(home, { recursive: true });
        jobs.push(
          new Job(lang, order, {
            PATH: process.env['PATH'] ?? '',
            HOME: home,
            QUOTA_GUARD_JOURNAL: join(home, 'journal.jsonl'),
            QG_DRILL_CLIENT_DIR: join(ROOT, 'clients', lang),
            QG_DRILL_URLS: order.join(','),
            QG_DRILL_TOKEN: secrets[lang],
            QG_DRILL_DEADLINE: String(DEADLINE_S),
            QG_DRILL_CREDENTIAL: CREDENTIAL,
            QG_DRILL_JOB: `${lang}-cron`,
            QG_DRILL_SIM_URL: day.sim.url,
            QG_DRILL_SIM_KEY: keys[lang],
            QG_DRILL_PAGES: String(pages),
            QG_DRILL_INTERVAL_MS: String(intervalMs),
            QG_DRILL_REGIONS: s.regions.join(','),
            QG_DRILL_DAY_END_MS: String(day.nextResetAt),
            QG_DRILL_STOP: stopFile,
          }),
        );
      });
      s.progress(
        `php and python cron jobs: ${pages} page(s) a run, a run every ${(intervalMs / 1000).toFixed(2)}s each`,
      );

      const [a, b] = instances as [Serve, Serve];
      const at = (f: number, fn: () => Promise<void>) =>
        timers.push(
          setTimeout(
            () => pending.push(fn().catch((e) => s.progress(`serve: ${String(e)}`))),
            Math.max(0, t0 + f * dayMs - Date.now()),
          ),
        );
      at(0.5, async () => {
        a.kill('SIGKILL');
        s.progress(`t=${((Date.now() - t0) / 1000).toFixed(1)}s: serve A killed (SIGKILL)`);
      });
      at(0.55, async () => {
        await a.exited();
        await a.start();
        s.progress(`t=${((Date.now() - t0) / 1000).toFixed(1)}s: serve A started again`);
      });
      at(0.75, async () => {
        s.progress(
          `t=${((Date.now() - t0) / 1000).toFixed(1)}s: serve B restarted (SIGTERM, then started again)`,
        );
        await b.stop();
        await b.start();
      });
    },

    async finish(day) {
      writeFileSync(stopFile, '');
      // A job ends its run, replays its journal (30 s at most) and exits; one that hangs is killed.
      const late = setTimeout(() => {
        for (const j of jobs) j.kill();
      }, 90_000);
      const summaries = await Promise.all(jobs.map((j) => j.done));
      clearTimeout(late);
      await Promise.all(pending);
      const runs = await clientRuns(day);
      const clients = jobs.map((j, n) => clientFigures(j, summaries[n]!, runs));
      const report: DrillMixed = {
        simulator: {
          url: day.sim.url,
          project: PROJECT,
          keys: { node: day.setup.config.apiKey(CREDENTIAL), ...keys },
        },
        instances: instances.map((i) => i.describe()),
        clients,
        clientUnits: clients.reduce((n, c) => n + c.historyUnits, 0),
        clientPages: clients.reduce((n, c) => n + c.pages, 0),
      };
      return { report, checks: mixedChecks(clients, started?.urls.length ?? 0) };
    },

    // After the figures are read: the instances stop gracefully (a drill that failed kills its jobs).
    async close() {
      for (const j of jobs) j.kill();
      await Promise.all(instances.map((i) => i.stop()));
    },
  };
}

const tokenName = (lang: ClientLang) => `${lang}-cron`;

/** The runs the clients recorded, by token name: how many, their distinct names, their units. */
async function clientRuns(
  day: Day,
): Promise<Map<string, { runs: number; names: Set<string>; units: number }>> {
  const history = await openRunHistory(day.setup.config.store);
  try {
    const runs = await history.list({ credentials: [CREDENTIAL], limit: 10_000 });
    const by = new Map<string, { runs: number; names: Set<string>; units: number }>();
    for (const r of runs) {
      if (r.client === undefined) continue;
      const c = by.get(r.client) ?? { runs: 0, names: new Set<string>(), units: 0 };
      c.runs++;
      c.names.add(r.job);
      c.units += r.units;
      by.set(r.client, c);
    }
    return by;
  } finally {
    await history.close();
  }
}

interface JobSummary {
  runs: number;
  spends: number;
  reasons: Record<string, number>;
  pages: number;
  quotaExceeded: number;
  upstreamErrors: number;
  journalLeft: number;
}

function clientFigures(
  job: Job,
  done: { code: number | null; summary: JobSummary | null },
  runs: Map<string, { runs: number; names: Set<string>; units: number }>,
): DrillClient {
  const s = done.summary;
  const h = runs.get(tokenName(job.lang));
  const ok = s !== null && done.code === 0;
  return {
    lang: job.lang,
    token: tokenName(job.lang),
    urls: job.urls,
    runs: s?.runs ?? 0,
    // A run recorded twice would be two rows under one name: count the names.
    runsInHistory: h ? Math.min(h.runs, h.names.size) : 0,
    historyUnits: h?.units ?? 0,
    spends: s?.spends ?? 0,
    reasons: s?.reasons ?? {},
    pages: s?.pages ?? 0,
    failOpen: job.said.failOpen,
    unknown: job.said.unknown,
    journalled: job.said.journalled,
    replayed: job.said.replayed,
    journalLeft: s?.journalLeft ?? -1,
    quotaExceeded: s?.quotaExceeded ?? 0,
    upstreamErrors: s?.upstreamErrors ?? 0,
    exitCode: done.code,
    ...(ok ? {} : { said: job.said.last }),
  };
}

function mixedChecks(clients: readonly DrillClient[], instances: number): DrillCheck[] {
  const each = (f: (c: DrillClient) => string) => clients.map(f).join('; ');
  return [
    {
      name: 'clientRunsInHistory',
      ok:
        instances === 2 && clients.every((c) => c.exitCode === 0 && c.runs > 0 && c.runsInHistory === c.runs),
      detail: each(
        (c) =>
          `${c.lang}: ${c.runsInHistory} of ${c.runs} runs in the history${c.exitCode === 0 ? '' : ` (exited ${c.exitCode ?? 'on a signal'})`}`,
      ),
    },
    {
      name: 'clientJournalsReplayed',
      ok: clients.every((c) => c.journalLeft === 0),
      detail: each(
        (c) =>
          `${c.lang}: ${c.journalled} lines journalled, ${c.replayed} replayed, ${c.journalLeft < 0 ? 'unknown' : c.journalLeft} left (${c.failOpen} fail-open, ${c.unknown} unknown spends)`,
      ),
    },
  ];
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

const tail = (text: string, lines = 8) => text.trimEnd().split('\n').slice(-lines);

/** One `quota-guard serve --decisions` child process on a fixed address, started again at will. */
class Serve {
  readonly url: string;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  readonly #events: DrillInstance['events'] = [];

  constructor(
    readonly name: 'A' | 'B',
    readonly listen: string,
    readonly args: readonly string[],
    readonly env: NodeJS.ProcessEnv,
    readonly fraction: (at: number) => number,
  ) {
    this.url = `http://${listen}`;
  }

  async start(): Promise<void> {
    const argv = [
      ...(FROM_SOURCE ? ['--import', 'tsx'] : []),
      BIN,
      'serve',
      '--http',
      this.listen,
      ...this.args,
    ];
    const child = spawn(process.execPath, argv, {
      cwd: ROOT,
      env: this.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.#child = child;
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-16_384);
    });
    this.#exited = new Promise((resolve) =>
      child.once('exit', () => {
        this.#events.push({ at: this.fraction(Date.now()), what: 'exited' });
        resolve();
      }),
    );
    // A start on a busy machine takes seconds (Node, the loader, the store).
    const deadline = Date.now() + 60_000;
    while (!/decision API at https?:\/\//.test(stderr)) {
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        this.#events.push({ at: this.fraction(Date.now()), what: 'start failed' });
        throw new Error(`serve ${this.name} did not start: ${tail(stderr).join(' | ')}`);
      }
      await sleep(20);
    }
    this.#events.push({ at: this.fraction(Date.now()), what: 'started' });
  }

  kill(signal: 'SIGKILL' | 'SIGTERM'): void {
    const c = this.#child;
    if (c && c.exitCode === null && c.signalCode === null) {
      c.kill(signal);
      this.#events.push({ at: this.fraction(Date.now()), what: signal });
    }
  }

  exited(): Promise<void> {
    return this.#exited;
  }

  /** Graceful: SIGTERM, and SIGKILL if it is still there 15 s later. */
  async stop(): Promise<void> {
    this.kill('SIGTERM');
    const late = setTimeout(() => this.kill('SIGKILL'), 15_000);
    await this.#exited;
    clearTimeout(late);
  }

  describe(): DrillInstance {
    return { name: this.name, url: this.url, events: this.#events };
  }
}

/** One cron job (php or python3) running clients/drill/cron.*, its stderr counted as it comes. */
class Job {
  readonly done: Promise<{ code: number | null; summary: JobSummary | null }>;
  readonly said = { failOpen: 0, unknown: 0, journalled: 0, replayed: 0, last: [] as string[] };
  readonly #child: ChildProcess;

  constructor(
    readonly lang: ClientLang,
    readonly urls: string[],
    env: Record<string, string>,
  ) {
    const script = join(ROOT, 'clients/drill', lang === 'php' ? 'cron.php' : 'cron.py');
    const child = spawn(lang === 'php' ? 'php' : 'python3', [script], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child = child;
    let stdout = '';
    let partial = '';
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr!.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) this.#line(l);
    });
    this.done = new Promise((resolve) => {
      child.once('close', (code) => {
        if (partial) this.#line(partial);
        let summary: JobSummary | null = null;
        try {
          summary = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as JobSummary;
        } catch {
          this.said.last.push(...tail(stdout, 4));
        }
        resolve({ code, summary });
      });
    });
  }

  #line(l: string): void {
    if (l.trim() === '') return;
    this.said.last.push(l);
    if (this.said.last.length > 8) this.said.last.shift();
    if (/^quota-guard: fail-open: /.test(l)) this.said.failOpen++;
    if (/^quota-guard: unknown: /.test(l)) this.said.unknown++;
    if (/^quota-guard: .*journalled (to be|in) /.test(l)) this.said.journalled++;
    const replayed = /^quota-guard: journal: replayed (\d+) line/.exec(l);
    if (replayed) this.said.replayed += Number(replayed[1]);
  }

  kill(): void {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill('SIGKILL');
  }
}
