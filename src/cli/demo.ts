/**
 * What `quota-guard demo [--dir DIR]` runs (loaded when the command runs): the main job on embedded defaults, with no Redis and no API key.
 * Starts the upstream simulator in-process with a throwaway key, points the default config at it
 * (SQLite ledger and cache in a fresh temporary directory, removed at the end, or in DIR, kept),
 * runs the 8 regional trending jobs at once through the guard, a short backfill, prints `status`,
 * searches the cache, and says what happened in a few lines.
 */

import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import YAML from 'yaml';
import { DEFAULT_LEDGER_FILE, dataDir } from '../config/paths.js';
import type { CredentialConfig } from '../config/types.js';
import { ExitCode, StoreUnavailableError } from '../errors.js';
import { quotaStatus, type StatusReport } from '../guard/status.js';
import type { GuardLogger } from '../guard/types.js';
import { openQuotaGuard } from '../quota-guard.js';
import { combinedExitCode, runSideBySide } from '../runs/job-run.js';
import type { SearchResult } from '../youtube/cache/types.js';
import { loadYouTubeConfig, parseYouTubeConfig } from '../youtube/config/part.js';
import type { YouTubeConfig } from '../youtube/config/types.js';
import { scheduledNeed } from '../youtube/cron-runs.js';
import { backfillMethod, runBackfill } from '../youtube/job-library/backfill.js';
import { openJobContext } from '../youtube/job-library/context.js';
import { jobLine, totals } from '../youtube/job-library/summary.js';
import { runTrending } from '../youtube/job-library/trending.js';
import type { JobResult } from '../youtube/job-library/types.js';
import { startSimulator } from '../youtube/simulator/index.js';
import { cliLogger } from './context.js';
import { count, formatNumber } from './render/format.js';
import { renderSearch } from './render/search.js';
import { renderStatus } from './render/status.js';

/** The environment variable the demo's credential reads its key from (set only in the demo's own env). */
const DEMO_KEY_ENV = 'QUOTA_GUARD_DEMO_KEY';

export interface DemoOptions {
  /** Keep the ledger and cache here (default: a temporary directory, removed at the end). */
  dir?: string;
  /** A config file whose credentials, quotas, budgets and regions the demo uses (its store, cache and upstream are replaced). */
  config?: string;
  /** Units the short backfill may spend (default 10: 500 videos). */
  backfillUnits?: number;
  out?: NodeJS.WritableStream;
  logger?: GuardLogger;
  signal?: AbortSignal;
}

export interface DemoReport {
  dir: string;
  kept: boolean;
  simulatorUrl: string;
  trending: JobResult[];
  backfill: JobResult;
  status: StatusReport;
  search: { query: string; result: SearchResult };
  /** Units the simulator charged the demo's project, and what the ledger recorded for it. */
  upstreamCharged: number;
  ledgerUsed: number;
  exitCode: number;
}

/** Run the demo; what it prints goes to `out` (stdout by default). */
export async function runDemo(options: DemoOptions = {}): Promise<DemoReport> {
  const out = options.out ?? process.stdout;
  const say = (s: string) => out.write(`${s}\n`);
  const base = demoBase(options.config);
  const { dir, kept } = demoDir(options.dir);
  const logger = options.logger ?? cliLogger({ LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'warn' });
  const key = `demo-${randomBytes(12).toString('hex')}`;
  const keyOf = (i: number) => `${key}-${i}`;
  const sim = await startDemoSimulator(base, keyOf);
  try {
    const config = demoConfig(base, dir, sim.url, keyOf);
    // The one opener, as every command opens it; the jobs' cache and clients over the same handle.
    const qg = await openQuotaGuard(config, { logger, scheduledNeed: scheduledNeed(config) });
    const { ledger } = qg;
    const jobs = openJobContext(qg);
    try {
      const run: DemoRun = {
        say,
        out,
        config,
        credential: config.credential(base.credentials[0]!.id),
        jobs,
        signal: options.signal,
      };
      // A kept directory may hold earlier runs' spend: compare only what this run adds to the ledger
      // with what this run's simulator (a fresh upstream project) charged.
      const before = usedBy(
        await quotaStatus(config, ledger, { scheduledNeed: scheduledNeed(config) }),
        run.credential,
      );
      say(
        `quota-guard demo: the YouTube Data API simulator on ${sim.origin} (a throwaway key, ${run.credential.profile} quotas)`,
      );
      say(
        `ledger: embedded SQLite ${join(dir, 'quota.db')}; cache: ${join(dir, 'cache.db')} ` +
          (kept ? '(kept)' : '(a temporary directory, removed at the end; keep it with --dir DIR)'),
      );
      say('');
      const trending = await trendingStep(run);
      const backfill = await backfillStep(run, options.backfillUnits ?? 10);

      say('3. status (what `quota-guard status` prints):');
      const status = await quotaStatus(config, ledger, { scheduledNeed: scheduledNeed(config) });
      out.write(indent(renderStatus(status)));
      const ledgerUsed = usedBy(status, run.credential) - before;
      const upstreamCharged = sim.charged({ project: run.credential.id });
      say('');

      const search = searchStep(run);
      const exitCode = demoExitCode([...trending, backfill], ledgerUsed, upstreamCharged);
      sayVerdict(say, { ledgerUsed, upstreamCharged, before, dir, exitCode });
      sayWhereItIs(say, dir, kept, base.raw);
      return {
        dir,
        kept,
        simulatorUrl: sim.url,
        trending,
        backfill,
        status,
        search,
        upstreamCharged,
        ledgerUsed,
        exitCode,
      };
    } finally {
      await jobs.close();
      await qg.close();
    }
  } finally {
    await sim.close();
    if (!kept) rmSync(dir, { recursive: true, force: true });
  }
}

type DemoBase = ReturnType<typeof demoBase>;

/** What each step of the demo prints to and runs with. */
interface DemoRun {
  say(s: string): void;
  out: NodeJS.WritableStream;
  config: YouTubeConfig;
  /** The first credential: the one the demo reports on. */
  credential: CredentialConfig;
  jobs: ReturnType<typeof openJobContext>;
  signal: AbortSignal | undefined;
}

/** The directory given (created, kept) or a fresh temporary one (removed at the end). */
function demoDir(given: string | undefined): { dir: string; kept: boolean } {
  const kept = given !== undefined;
  const dir = kept ? resolve(given) : mkdtempSync(join(tmpdir(), 'quota-guard-demo-'));
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    throw new StoreUnavailableError(`demo directory ${dir} cannot be created (${String(code)})`, {
      cause: e,
    });
  }
  return { dir, kept };
}

/** The simulator with one throwaway key per credential, under the first credential's profile and quotas. */
function startDemoSimulator({ regions, credentials, profiles }: DemoBase, keyOf: (i: number) => string) {
  const first = credentials[0]!;
  return startSimulator({
    port: 0,
    keys: credentials.map((c, i) => `${keyOf(i)}@${c.id}`),
    profile: profiles[first.profile] ?? first.profile,
    quota: first.buckets[first.defaultBucket]?.quota ?? 10_000,
    buckets: Object.fromEntries(
      Object.values(first.buckets)
        .filter((b) => b.id !== first.defaultBucket)
        .map((b) => [b.id, b.quota]),
    ),
    regions,
  });
}

/** The user's file (or the defaults) with the demo's store, cache, upstream and keys. */
function demoConfig(
  { raw, credentials }: DemoBase,
  dir: string,
  baseUrl: string,
  keyOf: (i: number) => string,
) {
  return parseYouTubeConfig(
    {
      ...raw,
      store: `sqlite:${join(dir, 'quota.db')}`,
      cache: { path: join(dir, 'cache.db') },
      upstream: { ...(raw['upstream'] as object | undefined), baseUrl },
      credentials: credentials.map((c, i) => ({
        ...(rawCredentials(raw)[i] ?? { id: c.id }),
        apiKeyEnv: `${DEMO_KEY_ENV}_${i}`,
      })),
    },
    { env: Object.fromEntries(credentials.map((_, i) => [`${DEMO_KEY_ENV}_${i}`, keyOf(i)])) },
  );
}

async function trendingStep({ say, config, credential, jobs, signal }: DemoRun): Promise<JobResult[]> {
  say(
    `1. trending: ${config.regions.length} regional jobs at once (${config.regions.join(' ')}), every page spent through the guard`,
  );
  const trending = await runSideBySide(
    config.regions.map((region) => runTrending(jobs, { region, ...(signal ? { signal } : {}) })),
  );
  for (const r of trending) say(indent(jobLine(r)));
  const t = totals(trending);
  say(
    `   together: ${count(t.pages, 'page')}, ${count(t.videos, 'video')} (${formatNumber(jobs.cache.stats().videos)} distinct), ${count(t.units, 'unit')} of ${credential.id}/${credential.defaultBucket}`,
  );
  say('');
  return trending;
}

async function backfillStep(
  { say, credential, jobs, signal }: DemoRun,
  backfillUnits: number,
): Promise<JobResult> {
  const method = backfillMethod(credential);
  say(
    `2. backfill: refresh the oldest cached videos, 50 per ${method} call, at most ${count(backfillUnits, 'unit')} (backfill tier; the demo refreshes videos just fetched, which a real backfill leaves alone for backfill.minAge)`,
  );
  const backfill = await runBackfill(jobs, {
    maxUnits: backfillUnits,
    minAgeMs: 0,
    ...(signal ? { signal } : {}),
  });
  say(indent(jobLine(backfill)));
  say('');
  return backfill;
}

/** A word of the first region's top video, searched in the cache. */
function searchStep({ say, out, config, jobs }: DemoRun): DemoReport['search'] {
  const top = jobs.cache.latestSnapshot(config.regions[0] ?? 'US')?.videos[0];
  const query = sampleWord(top?.title ?? null) ?? 'music';
  say(`4. search ${JSON.stringify(query)} in the local cache (no upstream call, no quota):`);
  const result = jobs.cache.search(query, { limit: 3 });
  out.write(indent(renderSearch(query, result, jobs.cache.stats().videos)));
  say('');
  return { query, result };
}

function sayVerdict(
  say: (s: string) => void,
  r: { ledgerUsed: number; upstreamCharged: number; before: number; dir: string; exitCode: ExitCode },
): void {
  const { ledgerUsed, upstreamCharged, before, dir, exitCode } = r;
  const agree = ledgerUsed === upstreamCharged;
  say(
    `${before > 0 ? 'this run: ' : ''}the ledger recorded ${formatNumber(ledgerUsed)} units and the simulator charged ${formatNumber(upstreamCharged)}: ` +
      (agree ? 'they agree.' : 'they differ (see the log lines above).') +
      (before > 0 ? ` (${dir} already held ${formatNumber(before)} units from earlier runs.)` : ''),
  );
  say(
    exitCode === ExitCode.OK
      ? 'demo finished: every job done, nothing overspent.'
      : `demo finished with exit code ${exitCode} (${agree ? 'see the lines above' : 'the ledger and the upstream disagree'}).`,
  );
}

/**
 * Where the demo's data is and how to look at it again: `quota-guard status` reads the operator's
 * own ledger, which the demo never touches (a read-only command that finds none there exits 66).
 * A kept directory gets a config naming its ledger and cache, `demo.yaml`, for the commands that
 * read them.
 */
function sayWhereItIs(
  say: (s: string) => void,
  dir: string,
  kept: boolean,
  raw: Record<string, unknown>,
): void {
  const own = join(dataDir(process.env).path, DEFAULT_LEDGER_FILE);
  if (!kept) {
    say(
      `its data was in a temporary directory, removed now: \`quota-guard status\` reads your own ledger (${own}), which the demo does not touch. To look around afterwards: quota-guard demo --dir DIR, then quota-guard status --config DIR/demo.yaml (or history, search).`,
    );
    return;
  }
  const file = join(dir, 'demo.yaml');
  const { upstream: _, ...rest } = raw;
  writeFileSync(
    file,
    `# What \`quota-guard demo --dir\` kept: its ledger and cache, for status, history and search.\n${YAML.stringify({ ...rest, store: `sqlite:${join(dir, 'quota.db')}`, cache: { path: join(dir, 'cache.db') } })}`,
  );
  say(
    `its data stays in ${dir}: look at it again with quota-guard status --config ${file} (or history, search); a plain \`quota-guard status\` reads your own ledger, ${own}.`,
  );
}

/**
 * The demo's exit code: the jobs' combined code, or 70 when the ledger recorded other units than the
 * upstream charged (a bug in the accounting, whatever the jobs did).
 */
export function demoExitCode(results: readonly JobResult[], recorded: number, charged: number): ExitCode {
  return recorded === charged ? combinedExitCode(results) : ExitCode.SOFTWARE;
}

/** Units the ledger holds in every bucket of `credential`. */
function usedBy(status: StatusReport, credential: CredentialConfig): number {
  const c = status.credentials.find((x) => x.id === credential.id);
  return (c?.buckets ?? []).reduce((sum, b) => sum + b.used, 0);
}

function indent(text: string): string {
  return text.replace(/^(?=.)/gm, '   ');
}

/** The raw config the demo starts from (validated first, so a bad file is one line per problem). */
function demoBase(file: string | undefined): {
  raw: Record<string, unknown>;
  regions: readonly string[];
  credentials: readonly CredentialConfig[];
  profiles: YouTubeConfig['profiles'];
} {
  const config = loadYouTubeConfig(file !== undefined ? { file } : { env: {} });
  const raw =
    file !== undefined ? ((YAML.parse(readFileSync(file, 'utf8')) ?? {}) as Record<string, unknown>) : {};
  return { raw, regions: config.regions, credentials: config.credentials, profiles: config.profiles };
}

function rawCredentials(raw: Record<string, unknown>): Array<Record<string, unknown>> {
  return Array.isArray(raw['credentials']) ? (raw['credentials'] as Array<Record<string, unknown>>) : [];
}

/** The first word of at least 5 letters of a title (else its first word). */
function sampleWord(title: string | null): string | undefined {
  const words = (title ?? '').match(/\p{L}+/gu) ?? [];
  return words.find((w) => w.length >= 5) ?? words[0];
}
