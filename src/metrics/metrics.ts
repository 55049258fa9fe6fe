/**
 * Prometheus metrics for a long-running quota-guard (`quota-guard run --http …`), on a registry of
 * their own (prom-client). Two kinds of input, never log lines:
 *
 * - events, pushed as they happen: the guard's `onEvent` (decisions, fail-open spends, upstream
 *   errors, stops, blocks, refunds), each finished job run (`jobRun`), each tick the scheduler skipped;
 * - state, read at scrape time (`scrape()`): units used and remaining per credential, bucket and tier
 *   from the ledger (the same figures as `status`), and the cache's size.
 */

import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { type Config, TIERS } from '../config/types.js';
import { quotaStatus } from '../guard/status.js';
import { type GuardEvent, STOP_REASONS } from '../guard/types.js';
import { JOB_OUTCOMES, jobKind, type RunHistory } from '../history/types.js';
import { clockStepsCorrected } from '../ledger/clock.js';
import type { Ledger } from '../ledger/types.js';
import type { Cache } from '../youtube/cache/index.js';
import { scheduledNeed } from '../youtube/cron-runs.js';
import { regionFreshness } from '../youtube/freshness.js';
import type { JobResult } from '../youtube/job-library/types.js';
import { regionOfJob } from '../youtube/job-names.js';
import { youtubeConfigured } from '../youtube/trending-spend.js';
import type { ConnectionStats } from './connections.js';
import { ReconcileMetrics } from './reconcile.js';

export const METRIC_PREFIX = 'quota_guard_';

/** What the metrics read at scrape time. Either may be absent (e.g. a process without a cache). */
export interface MetricSources {
  config: Config;
  ledger?: Ledger;
  cache?: Cache;
  /** The run history in the ledger's store: region freshness and runs by outcome, whichever host ran them. */
  history?: RunHistory;
}

const DECISIONS = ['allowed', 'denied', 'blocked', 'fail-open', 'fail-closed', 'store-down'] as const;
const JOBS = ['trending', 'backfill'] as const;

/**
 * Job names of recorded runs that get a `job` label of their own per credential besides the jobs
 * above: the first this many seen (the run history's totals in the store's order at the first
 * scrape, then as they appear); the rest are summed under `job="other"` and counted in
 * `recorded_job_names_folded`. Clients name their jobs (`POST /v1/runs`), so without a bound 2,000
 * names from one token were 4,000 more series.
 */
export const MAX_JOB_LABELS = 25;
export const OTHER_JOBS = 'other';

/** `trending:US` → job `trending`, region `US`; `backfill` → job `backfill`, region ``. */
export function jobLabels(job: string): { job: string; region: string } {
  return { job: jobKind(job), region: regionOfJob(job) ?? '' };
}

export class Metrics {
  readonly registry = new Registry();
  #sources: MetricSources | undefined;

  readonly unitsUsed: Gauge<'credential' | 'bucket'>;
  readonly unitsRemaining: Gauge<'credential' | 'bucket' | 'tier'>;
  readonly quota: Gauge<'credential' | 'bucket'>;
  readonly blocked: Gauge<'credential' | 'bucket'>;
  readonly storeUp: Gauge;
  readonly decisions: Counter<'credential' | 'bucket' | 'tier' | 'outcome'>;
  readonly failOpen: Counter<'credential' | 'bucket'>;
  readonly failOpenUnits: Counter<'credential' | 'bucket'>;
  readonly settled: Counter<'credential' | 'bucket' | 'result'>;
  readonly journalled: Counter<'credential' | 'bucket' | 'op'>;
  readonly recordedLateUnits: Counter<'credential' | 'bucket'>;
  readonly recordedLateEntries: Counter<'credential' | 'bucket'>;
  readonly droppedLate: Counter<'credential' | 'bucket'>;
  readonly upstreamErrors: Counter<'method' | 'reason'>;
  readonly stops: Counter<'reason'>;
  readonly blocks: Counter<'credential' | 'bucket'>;
  readonly refunds: Counter<'credential' | 'bucket'>;
  readonly jobRuns: Counter<'job' | 'outcome'>;
  readonly jobDuration: Histogram<'job' | 'outcome'>;
  readonly jobUnits: Counter<'job'>;
  readonly pages: Counter<'job' | 'region'>;
  readonly skipped: Counter<'job'>;
  readonly clockSteps: Counter;
  readonly cacheVideos: Gauge;
  readonly cacheBytes: Gauge;
  readonly regionLastSuccess: Gauge<'region'>;
  readonly regionStale: Gauge<'region'>;
  readonly recordedRuns: Counter<'credential' | 'job' | 'outcome'>;
  readonly recordedUnits: Counter<'credential' | 'job'>;
  readonly historyUp: Gauge;
  readonly foldedJobs: Gauge<'credential'>;
  /** Per credential, the job names given a label of their own (MAX_JOB_LABELS). */
  readonly #jobLabels = new Map<string, Set<string>>();
  readonly apiRequests: Counter<'route' | 'outcome' | 'client'>;
  readonly apiDuration: Histogram<'route'>;
  readonly connections: Gauge<'state'>;
  readonly connectionsClosed: Counter<'why'>;
  /** The reconcile's figures, age and errors (reconcile.ts). */
  readonly reconcile: ReconcileMetrics;
  #connectionStats: (() => ConnectionStats) | undefined;

  /**
   * Declares every metric: one statement each, the name, help text and labels that docs/operations.md
   * lists. Long (about 120 lines) but flat, a table rather than logic, so it stays in one piece.
   */
  constructor(sources?: MetricSources) {
    this.#sources = sources;
    const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
      new Gauge<L>({ name: `${METRIC_PREFIX}${name}`, help, labelNames, registers: [this.registry] });
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
      new Counter<L>({ name: `${METRIC_PREFIX}${name}`, help, labelNames, registers: [this.registry] });
    this.unitsUsed = gauge(
      'units_used',
      'Units spent in the bucket’s current window (as `status` shows them)',
      ['credential', 'bucket'],
    );
    this.unitsRemaining = gauge(
      'units_remaining',
      'Units left for the tier in the bucket’s current window: its ceiling and every narrower budget on all of the bucket’s methods, not the pace; a block leaves it as it is (see bucket_blocked)',
      ['credential', 'bucket', 'tier'],
    );
    this.quota = gauge('units_quota', 'The bucket’s quota per upstream day', ['credential', 'bucket']);
    this.blocked = gauge(
      'bucket_blocked',
      '1 while the bucket is blocked (the upstream said its daily quota is used up), else 0',
      ['credential', 'bucket'],
    );
    this.storeUp = gauge('ledger_up', '1 when the ledger store answered the last scrape, else 0');
    this.decisions = counter(
      'ledger_decisions_total',
      'Spend decisions by outcome: allowed, denied (budget), blocked, fail-open, fail-closed, store-down (the caller decides)',
      ['credential', 'bucket', 'tier', 'outcome'],
    );
    this.failOpen = counter(
      'fail_open_spends_total',
      'Spends let through unrecorded because the ledger store was down (one whose answer never came counts once settled as not recorded)',
      ['credential', 'bucket'],
    );
    this.failOpenUnits = counter(
      'fail_open_units_total',
      'Units of the spends let through unrecorded because the ledger store was down',
      ['credential', 'bucket'],
    );
    this.settled = counter(
      'settled_spends_total',
      'Spends whose answer never came, settled once the store answered: recorded, refunded, absent, abandoned',
      ['credential', 'bucket', 'result'],
    );
    this.journalled = counter(
      'journalled_spends_total',
      'Spends written to the guard’s journal: fail-open (op=record) or whose answer never came (op=unknown)',
      ['credential', 'bucket', 'op'],
    );
    this.recordedLateUnits = counter(
      'recorded_late_units_total',
      'Units written into the ledger after they were spent (a journal replayed: the guard’s own or a client’s)',
      ['credential', 'bucket'],
    );
    this.recordedLateEntries = counter(
      'recorded_late_entries_total',
      'Entries written into the ledger after they were spent (each entry id counted once)',
      ['credential', 'bucket'],
    );
    this.droppedLate = counter(
      'recorded_late_dropped_total',
      'Entries arriving late that had left every window: not written',
      ['credential', 'bucket'],
    );
    this.upstreamErrors = counter(
      'upstream_errors_total',
      'Upstream errors by API method and reason (quotaExceeded, rateLimitExceeded, backendError, transport, …)',
      ['method', 'reason'],
    );
    this.stops = counter(
      'guard_stops_total',
      'Times the guard told a job to stop instead of sleeping, by reason',
      ['reason'],
    );
    this.blocks = counter('bucket_blocks_total', 'Times a bucket was blocked until the upstream’s reset', [
      'credential',
      'bucket',
    ]);
    this.refunds = counter(
      'refunds_total',
      'Spends taken back because the request provably never reached the upstream',
      ['credential', 'bucket'],
    );
    this.jobRuns = counter(
      'job_runs_total',
      'Finished job runs by job and outcome (done, stopped, aborted, unavailable, failed)',
      ['job', 'outcome'],
    );
    this.jobDuration = new Histogram({
      name: `${METRIC_PREFIX}job_run_duration_seconds`,
      help: 'How long job runs took',
      labelNames: ['job', 'outcome'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800],
      registers: [this.registry],
    });
    this.clockSteps = new Counter({
      name: `${METRIC_PREFIX}clock_steps_total`,
      help: 'Steps of the host clock the SQLite ledger detected and corrected by moving its stored times (docs/ledger.md)',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(clockStepsCorrected());
      },
    });
    this.jobUnits = counter('job_units_total', 'Units job runs spent through the guard', ['job']);
    this.pages = counter(
      'pages_written_total',
      'Upstream pages (trending) or id batches (backfill) written to the cache',
      ['job', 'region'],
    );
    this.skipped = counter(
      'scheduler_skipped_ticks_total',
      'Scheduled ticks skipped because the same job was still running',
      ['job'],
    );
    this.cacheVideos = gauge('cache_videos', 'Videos in the local cache');
    this.cacheBytes = gauge('cache_bytes', 'Size of the cache file and its WAL in bytes');
    this.regionLastSuccess = gauge(
      'region_last_success_timestamp_seconds',
      'When the region’s last trending run that was done ended (any host), from the run history; absent when never',
      ['region'],
    );
    this.regionStale = gauge(
      'region_stale',
      '1 when the region’s last successful fetch is older than two trending schedule periods (or never happened), else 0',
      ['region'],
    );
    this.recordedRuns = counter(
      'recorded_job_runs_total',
      'Job runs recorded in the ledger’s store by every host (cron runs included), by job and outcome',
      ['credential', 'job', 'outcome'],
    );
    this.recordedUnits = counter(
      'recorded_job_units_total',
      'Units spent by the job runs recorded in the ledger’s store by every host, by job',
      ['credential', 'job'],
    );
    this.historyUp = gauge(
      'history_up',
      '1 when the run history in the ledger’s store answered the last scrape, else 0',
    );
    this.foldedJobs = gauge(
      'recorded_job_names_folded',
      `Job names of recorded runs beyond the first ${MAX_JOB_LABELS} per credential, whose runs and units are counted under job="${OTHER_JOBS}"`,
      ['credential'],
    );
    this.apiRequests = counter(
      'api_requests_total',
      'Decision API requests by route (spend, report, runs, status), outcome (a decision’s reason, replayed, an outcome reported, a run recorded, or the HTTP status of a refusal) and client (the token’s name)',
      ['route', 'outcome', 'client'],
    );
    this.apiDuration = new Histogram({
      name: `${METRIC_PREFIX}api_request_duration_seconds`,
      help: 'How long the decision API took to answer, from the request to the answer written, by route (a spend is one guard decision: a store round trip)',
      labelNames: ['route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
    const stats = () => this.#connectionStats?.();
    this.connections = new Gauge({
      name: `${METRIC_PREFIX}http_connections`,
      help: 'Open connections of the HTTP server: busy (a request being answered) or waiting (idle, or sending a request)',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        this.reset();
        const s = stats();
        if (!s) return;
        this.set({ state: 'busy' }, s.busy);
        this.set({ state: 'waiting' }, s.open - s.busy);
      },
    });
    this.connectionsClosed = new Counter({
      name: `${METRIC_PREFIX}http_connections_closed_total`,
      help: "Connections the HTTP server closed to stay within its table: shed (the longest waiting, to make room), refused (a newcomer while all were busy), slow (a next request's headers too slow)",
      labelNames: ['why'],
      registers: [this.registry],
      collect() {
        this.reset();
        const s = stats();
        if (!s) return;
        this.inc({ why: 'shed' }, s.shed);
        this.inc({ why: 'refused' }, s.refused);
        this.inc({ why: 'slow' }, s.slow);
      },
    });
    this.reconcile = new ReconcileMetrics(this.registry, METRIC_PREFIX);
    if (sources) this.#initialise(sources.config);
  }

  /** Where the HTTP server's connection figures are read at scrape time. */
  setConnections(stats: () => ConnectionStats): void {
    this.#connectionStats = stats;
  }

  /**
   * Every counter's series for the config's credentials, buckets, tiers and outcomes starts at 0, so
   * `increase()` sees the first event (a series born at 1 has no increase).
   */
  #initialise(config: Config): void {
    for (const c of config.credentials) {
      for (const bucket of Object.keys(c.buckets)) {
        const labels = { credential: c.id, bucket };
        for (const tier of TIERS)
          for (const outcome of DECISIONS) this.decisions.inc({ ...labels, tier, outcome }, 0);
        for (const m of [
          this.failOpen,
          this.failOpenUnits,
          this.blocks,
          this.refunds,
          this.recordedLateUnits,
          this.recordedLateEntries,
          this.droppedLate,
        ])
          m.inc(labels, 0);
      }
    }
    // The application's jobs and cache, where the config runs them: a config for another API has
    // neither (an unlabelled gauge would otherwise be served as 0).
    const app = youtubeConfigured(config);
    if (!app)
      for (const name of ['cache_videos', 'cache_bytes'])
        this.registry.removeSingleMetric(`${METRIC_PREFIX}${name}`);
    for (const job of app ? JOBS : []) {
      for (const outcome of JOB_OUTCOMES) this.jobRuns.inc({ job, outcome }, 0);
      this.jobUnits.inc({ job }, 0);
      this.skipped.inc({ job }, 0);
    }
    for (const reason of STOP_REASONS) this.stops.inc({ reason }, 0);
  }

  /** Set (or replace) what `scrape` reads. */
  setSources(sources: MetricSources): void {
    this.#sources = sources;
    this.#initialise(sources.config);
  }

  #countFailOpen(o: { credential: string; bucket: string; cost: number }): void {
    this.failOpen.inc({ credential: o.credential, bucket: o.bucket });
    this.failOpenUnits.inc({ credential: o.credential, bucket: o.bucket }, o.cost);
  }

  /** One decision API request answered (src/api/): route, outcome, the calling token's name, how long it took. */
  readonly apiRequest = (route: string, outcome: string, client: string, seconds?: number): void => {
    this.apiRequests.inc({ route, outcome, client });
    if (seconds !== undefined) this.apiDuration.observe({ route }, seconds);
  };

  /** Feed one guard event (pass as the guard's `onEvent`). Never throws. */
  readonly guardEvent = (e: GuardEvent): void => {
    switch (e.type) {
      case 'spend': {
        const o = e.outcome;
        // A remembered decision answered again was counted when it was taken.
        if (o.replayed) break;
        const outcome = o.allowed ? 'allowed' : o.reason === 'blocked' ? 'blocked' : 'denied';
        this.decisions.inc({ credential: o.credential, bucket: o.bucket, tier: o.tier, outcome });
        break;
      }
      case 'fail-open':
      case 'fail-closed':
      case 'store-down': {
        const o = e.outcome;
        this.decisions.inc({ credential: o.credential, bucket: o.bucket, tier: o.tier, outcome: e.type });
        // A spend whose answer never came is counted once settled, if it was not recorded.
        if (e.type === 'fail-open' && !e.unsettled) this.#countFailOpen(o);
        break;
      }
      case 'settled':
        this.settled.inc({ credential: e.outcome.credential, bucket: e.outcome.bucket, result: e.result });
        if (e.unrecorded) this.#countFailOpen(e.outcome);
        break;
      case 'upstream-error':
        this.upstreamErrors.inc({
          method: e.error.method ?? e.outcome.method ?? '',
          reason: e.error.reason ?? e.error.code,
        });
        break;
      case 'stop':
        this.stops.inc({ reason: e.stop.reason });
        break;
      case 'block':
        this.blocks.inc({ credential: e.credential, bucket: e.bucket });
        break;
      case 'refund':
        this.refunds.inc({ credential: e.outcome.credential, bucket: e.outcome.bucket });
        break;
      case 'journalled':
        this.journalled.inc({ credential: e.outcome.credential, bucket: e.outcome.bucket, op: e.op });
        break;
      case 'recorded-late': {
        const labels = { credential: e.late.credential, bucket: e.late.bucket };
        if (e.late.outcome === 'recorded') {
          this.recordedLateUnits.inc(labels, e.late.cost);
          this.recordedLateEntries.inc(labels);
        } else if (e.late.outcome === 'dropped') this.droppedLate.inc(labels);
        break;
      }
      case 'sleep':
        break;
    }
  };

  /** Feed one finished job run. */
  jobRun(r: JobResult): void {
    const { job, region } = jobLabels(r.job);
    this.jobRuns.inc({ job, outcome: r.outcome });
    this.jobDuration.observe({ job, outcome: r.outcome }, Math.max(0, r.finishedAt - r.startedAt) / 1000);
    if (r.units) this.jobUnits.inc({ job }, r.units);
    if (r.pages) this.pages.inc({ job, region }, r.pages);
  }

  /** A tick of `job` was skipped because its previous run was still going. */
  skippedTick(job: string): void {
    this.skipped.inc({ job: jobLabels(job).job });
  }

  /** Read the ledger and the cache into the gauges (a store that does not answer empties its gauges). */
  async refresh(): Promise<void> {
    const s = this.#sources;
    if (!s) return;
    if (s.ledger) {
      const report = await quotaStatus(s.config, s.ledger, { scheduledNeed: scheduledNeed(s.config) }).catch(
        () => undefined,
      );
      // Last scrape's figures go either way: a store that did not answer leaves the gauges absent
      // (stale figures would mislead an alert on them).
      this.unitsUsed.reset();
      this.unitsRemaining.reset();
      this.quota.reset();
      this.blocked.reset();
      for (const c of report?.credentials ?? [])
        for (const b of c.buckets) {
          const labels = { credential: c.id, bucket: b.id };
          this.unitsUsed.set(labels, b.used);
          this.quota.set(labels, b.quota);
          this.blocked.set(labels, b.blockedUntil ? 1 : 0);
          // Not zeroed by a block: the series stays what the window holds, so an extrapolation of it
          // sees no cliff when the block comes nor a leap when it goes (bucket_blocked says it).
          for (const [tier, units] of Object.entries(b.unitsLeft))
            this.unitsRemaining.set({ ...labels, tier }, units);
        }
      // Up means the store answered: a report that failed for another reason (a config this process
      // cannot plan with) must not read as a store that is down, which an alert pages for.
      const up =
        report !== undefined ||
        (await s.ledger.ping().then(
          () => true,
          () => false,
        ));
      this.storeUp.set(up ? 1 : 0);
    }
    if (s.history) await this.#refreshHistory(s.config, s.history);
    if (s.cache) {
      try {
        const st = s.cache.stats();
        this.cacheVideos.set(st.videos);
        this.cacheBytes.set(st.fileBytes);
      } catch {
        this.cacheVideos.reset();
        this.cacheBytes.reset();
      }
    }
  }

  /** Region freshness and the runs every host recorded, from the store (absent when it does not answer). */
  async #refreshHistory(config: Config, history: RunHistory): Promise<void> {
    const credentials = config.credentials.map((c) => c.id);
    // Regions and the application's jobs only where the config runs the application.
    const app = youtubeConfigured(config);
    const [freshness, totals] = await Promise.all([
      app ? regionFreshness(config, history, Date.now()).catch(() => undefined) : { regions: [] },
      history.totals(credentials).catch(() => undefined),
    ]);
    this.regionLastSuccess.reset();
    this.regionStale.reset();
    for (const r of freshness?.regions ?? []) {
      if (r.lastSuccessAt !== null) this.regionLastSuccess.set({ region: r.region }, r.lastSuccessAt / 1000);
      this.regionStale.set({ region: r.region }, r.stale ? 1 : 0);
    }
    this.recordedRuns.reset();
    this.recordedUnits.reset();
    if (totals) {
      for (const credential of credentials)
        for (const job of app ? JOBS : []) {
          this.recordedUnits.inc({ credential, job }, 0);
          for (const outcome of JOB_OUTCOMES) this.recordedRuns.inc({ credential, job, outcome }, 0);
        }
      this.foldedJobs.reset();
      const folded = new Map<string, Set<string>>();
      for (const t of totals) {
        const job = this.#jobLabel(t.credential, t.job);
        if (job === OTHER_JOBS && t.job !== OTHER_JOBS) {
          if (!folded.has(t.credential)) folded.set(t.credential, new Set());
          folded.get(t.credential)!.add(t.job);
        }
        this.recordedRuns.inc({ credential: t.credential, job, outcome: t.outcome }, t.runs);
        this.recordedUnits.inc({ credential: t.credential, job }, t.units);
      }
      for (const credential of credentials)
        this.foldedJobs.set({ credential }, folded.get(credential)?.size ?? 0);
    }
    this.historyUp.set(freshness && totals ? 1 : 0);
    await this.reconcile.refresh(config, history, Date.now());
  }

  /** The `job` label of a recorded job's runs: its name while it is among the first MAX_JOB_LABELS, else `other`. */
  #jobLabel(credential: string, job: string): string {
    if ((JOBS as readonly string[]).includes(job)) return job;
    let names = this.#jobLabels.get(credential);
    if (!names) {
      names = new Set();
      this.#jobLabels.set(credential, names);
    }
    if (names.has(job)) return job;
    if (names.size >= MAX_JOB_LABELS) return OTHER_JOBS;
    names.add(job);
    return job;
  }

  /** The Prometheus text exposition, state read now. */
  async scrape(): Promise<string> {
    await this.refresh();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

export function createMetrics(sources?: MetricSources): Metrics {
  return new Metrics(sources);
}
