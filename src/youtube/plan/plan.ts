/**
 * `planBudget(config)`: before anything runs, how many units each schedule spends at most in each
 * bucket, against the bucket's ceilings and every narrower budget, and — where it does not fit — by
 * how much and what to change.
 *
 * Spending sources, per credential and bucket:
 * - trending: regions × charts per region × `maxPages` × runs × the cost of `videos.list`, at the
 *   scheduled tier; the runs are the cron schedule's, each region shifted by its stagger;
 * - expected: calls per upstream day that people or scripts make (`expected` in the config), assumed
 *   to come in one burst;
 * - backfill: takes headroom only (the guard stops it at its tier's ceiling), so it never makes a plan
 *   fail; it is shown with the most it can take. It competes with the scheduled jobs only where it
 *   spends their bucket (videos.list under youtube-classic).
 *
 * A window is measured the way the ledger measures it: the most spent in any sliding window of the
 * bucket's (or budget's) length, or in any one calendar day of the upstream for `upstream-day`.
 */

import { windowLabel } from '../../config/duration.js';
import type {
  BucketConfig,
  BudgetConfig,
  Config,
  CredentialConfig,
  ExpectedSpendConfig,
  Tier,
} from '../../config/types.js';
import { budgetCovers } from '../../guard/keys.js';
import { youtubeConfig } from '../config/resolver.js';
import type { YouTubeConfig } from '../config/types.js';
import { cronRuns, maxInDay, maxInWindow, type Spend, trendingRuns } from '../cron-runs.js';
import { backfillMethod } from '../job-library/backfill.js';
import { chartsOf, TRENDING_METHOD, trendingMethod, youtubeConfigured } from '../trending-spend.js';
import type {
  BucketPlan,
  CheckKind,
  PlanChange,
  PlanCheck,
  PlanLine,
  PlanOptions,
  PlanReport,
} from './types.js';

const DAY_MS = 86_400_000;
/** Whole days looked at: a week covers weekly cron patterns. */
const HORIZON_DAYS = 7;

/** The credential the trending and backfill jobs spend: the first one configured. */
export function jobsCredential(config: YouTubeConfig): CredentialConfig {
  return config.credentials[0]!;
}

interface Source {
  line: Omit<PlanLine, 'units' | 'runs'>;
  /** Spends over the horizon (cron-based sources). */
  spends?: Spend[];
  /** Burst sources: units per upstream day. */
  perDay?: number;
  /** Trending: the base runs (without stagger), for run counts. */
  baseRuns?: Spend[];
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function planBudget(base: Config, options: PlanOptions = {}): PlanReport {
  const config = youtubeConfig(base);
  const now = options.now ?? Date.now();
  const cred = jobsCredential(config);
  const schedules = youtubeConfigured(config);
  const buckets: BucketPlan[] = [];
  const spent = new Map<string, Array<{ bucket: string; source: Source }>>();
  for (const c of config.credentials) {
    const sources = sourcesOf(config, c, schedules && cred.id === c.id, now);
    spent.set(c.id, sources);
    for (const bucket of Object.values(c.buckets)) {
      const mine = sources.filter((s) => s.bucket === bucket.id).map((s) => s.source);
      if (!mine.length) continue;
      buckets.push(planBucket(config, c, bucket, mine, now));
    }
  }
  if (options.advise !== false) for (const b of buckets) adviseChanges(config, b, now);
  const problems = buckets.flatMap((b) =>
    b.checks
      .filter((k) => !k.fits)
      .map(
        (k) =>
          `${b.credential}/${b.bucket}: ${k.name} ${fmt(k.limit)} per ${windowLabel(k)} is exceeded by ${fmt(k.over)} (schedules spend up to ${fmt(k.demand)})`,
      ),
  );
  return {
    fits: problems.length === 0,
    jobsCredential: cred.id,
    schedules,
    buckets,
    problems,
    warnings: idleBudgets(config, spent),
  };
}

/**
 * Budgets that limit nothing: no tier they cover spends their bucket or methods (e.g. a budget on
 * `units` for the backfill tier while the backfill spends `videos.batchGetStats`). A budget covering
 * the manual tier always may limit something: people spend any method.
 */
function idleBudgets(
  config: YouTubeConfig,
  spent: Map<string, Array<{ bucket: string; source: Source }>>,
): string[] {
  const used = new Set<string>();
  const budgets = new Map<string, { budget: BudgetConfig; credential: CredentialConfig }>();
  for (const c of config.credentials) {
    const sources = spent.get(c.id) ?? [];
    for (const b of c.budgets) {
      if (!budgets.has(b.id)) budgets.set(b.id, { budget: b, credential: c });
      const covers =
        b.tiers.includes('manual') ||
        sources.some((s) => budgetCovers(b, s.bucket, s.source.line.method, s.source.line.tier));
      if (covers) used.add(b.id);
    }
  }
  const out: string[] = [];
  for (const [id, { budget: b, credential: c }] of budgets) {
    if (used.has(id)) continue;
    const what = b.methods ? `${b.methods.join(', ')} on bucket ${b.bucket}` : `bucket ${b.bucket}`;
    const sources = spent.get(jobsCredential(config).id) ?? [];
    const spends = b.tiers.map((tier) => {
      const at = sources.filter((s) => s.source.line.tier === tier);
      if (!at.length) return `nothing is spent at the ${tier} tier`;
      return `the ${tier} tier spends ${at.map((s) => `${s.source.line.method} (bucket ${s.bucket})`).join(', ')}`;
    });
    out.push(
      `budget ${id} covers ${what} for ${b.tiers.join(', ')} under profile ${c.profile}, but ${spends.join('; ')}: it limits nothing`,
    );
  }
  return out;
}

/** The config with the trending schedule changed (for checking advice by planning it again). */
function withTrending(
  config: YouTubeConfig,
  change: { cron?: string; maxPages?: number; regions?: readonly string[] },
): YouTubeConfig {
  return {
    ...config,
    regions: change.regions ?? config.regions,
    schedules: {
      ...config.schedules,
      trending: {
        ...config.schedules.trending,
        ...(change.cron !== undefined ? { cron: change.cron } : {}),
        ...(change.maxPages !== undefined ? { maxPages: change.maxPages } : {}),
      },
    },
  };
}

/** Cron expressions from every 2 minutes to once a day, most runs first. */
const CANDIDATE_CRONS = [
  ...[2, 3, 4, 5, 6, 10, 12, 15, 20, 30].map((n) => `*/${n} * * * *`),
  ...[1, 2, 3, 4, 6, 8, 12].map((n) => (n === 1 ? '0 * * * *' : `0 */${n} * * *`)),
  '0 0 * * *',
];

/**
 * Where a bucket does not fit and trending takes part, the changes to the trending schedule that
 * make it fit: each one is applied to the config and planned again, and kept only when every check
 * of the bucket then fits except those that fail without any trending at all.
 */
function adviseChanges(config: YouTubeConfig, b: BucketPlan, now: number): void {
  if (b.fits || !b.lines.some((l) => l.source === 'trending' && l.units > 0)) return;
  const failing = (cfg: YouTubeConfig): Set<string> => {
    const r = planBudget(cfg, { now, advise: false });
    const x = r.buckets.find((y) => y.credential === b.credential && y.bucket === b.bucket);
    return new Set(x ? x.checks.filter((k) => !k.fits).map((k) => k.name) : []);
  };
  const irreducible = failing(withTrending(config, { regions: [] }));
  const fits = (cfg: YouTubeConfig) => [...failing(cfg)].every((n) => irreducible.has(n));
  const t = config.schedules.trending;
  const day = (cron: string) => cronRuns(cron, t.timeZone, now, now + DAY_MS).length;
  const changes: PlanChange[] = [];

  const runsNow = day(t.cron);
  const crons = CANDIDATE_CRONS.map((cron) => ({ cron, runs: day(cron) }))
    .filter((x) => x.runs < runsNow)
    .sort((x, y) => y.runs - x.runs);
  const cron = crons.find((x) => fits(withTrending(config, { cron: x.cron })));
  if (cron)
    changes.push({
      text: `run trending ${plural(cron.runs, 'time')} a day (now ${runsNow}): set schedules.trending.cron: "${cron.cron}"`,
      cron: cron.cron,
    });

  for (let pages = t.maxPages - 1; pages >= 1; pages--) {
    if (!fits(withTrending(config, { maxPages: pages }))) continue;
    changes.push({
      text: `fetch at most ${plural(pages, 'page')} per chart (now ${t.maxPages}): set schedules.trending.maxPages: ${pages}`,
      maxPages: pages,
    });
    break;
  }

  // The regions costing most first (more charts), the last listed first among equals.
  const charts = (r: string) => chartsOf(config, r);
  const order = config.regions
    .map((r, i) => ({ r, i }))
    .sort((x, y) => charts(y.r) - charts(x.r) || y.i - x.i)
    .map((x) => x.r);
  for (let n = 1; n < order.length; n++) {
    const move = order.slice(0, n);
    if (!fits(withTrending(config, { regions: config.regions.filter((r) => !move.includes(r)) }))) continue;
    const others = config.credentials.filter((x) => x.id !== b.credential && x.buckets[b.bucket]);
    changes.push({
      text: `move ${plural(n, 'region')} (${move.join(', ')}) to ${others.length ? `credential ${others.map((x) => x.id).join(' or ')}` : 'another credential (a second project with its own quota)'}`,
      moveRegions: move,
    });
    break;
  }

  b.changes = changes;
  for (const k of b.checks)
    if (!k.fits && !irreducible.has(k.name)) k.fixes = [...changes.map((c) => c.text), ...k.fixes];
}

function sourcesOf(
  config: YouTubeConfig,
  c: CredentialConfig,
  runsJobs: boolean,
  now: number,
): Array<{ bucket: string; source: Source }> {
  const out: Array<{ bucket: string; source: Source }> = [];
  const to = now + (HORIZON_DAYS + 2) * DAY_MS;
  if (runsJobs) {
    const t = config.schedules.trending;
    const list = trendingMethod(c);
    const { spends, ticks } = trendingRuns(config, c, now, to);
    const charts = config.regions.reduce((n, r) => n + chartsOf(config, r), 0);
    out.push({
      bucket: list.bucket,
      source: {
        line: {
          source: 'trending',
          id: 'trending',
          tier: 'scheduled',
          method: TRENDING_METHOD,
          cost: list.cost,
          detail:
            charts === config.regions.length
              ? `${plural(config.regions.length, 'region')} × ${plural(t.maxPages, 'page')} × {runs} × ${plural(list.cost, 'unit')}`
              : `${plural(charts, 'chart')} in ${plural(config.regions.length, 'region')} × ${plural(t.maxPages, 'page')} × {runs} × ${plural(list.cost, 'unit')}`,
        },
        spends,
        baseRuns: ticks.map((at) => ({ at, units: 1 })),
      },
    });
    const method = backfillMethod(c);
    const spec = c.methods[method]!;
    out.push({
      bucket: spec.bucket,
      source: {
        line: {
          source: 'backfill',
          id: 'backfill',
          tier: 'backfill',
          method,
          cost: spec.cost,
          detail: '',
        },
      },
    });
  }
  for (const e of config.expected.filter((x) => x.credential === c.id)) {
    out.push({ bucket: e.bucket, source: expectedSource(e) });
  }
  return out;
}

function expectedSource(e: ExpectedSpendConfig): Source {
  return {
    line: {
      source: 'expected',
      id: e.id,
      tier: e.tier,
      method: e.method,
      cost: e.cost,
      detail: `${plural(e.callsPerDay, 'call')} a day × ${plural(e.cost, 'unit')}`,
    },
    perDay: e.callsPerDay * e.cost,
  };
}

interface Window {
  kind: 'sliding' | 'upstream-day';
  ms: number;
}

/** Units a source spends at most in one window. */
function demandOf(s: Source, w: Window, timeZone: string, now: number): number {
  // An upstream-day window holds one upstream day (its 25 h length is only the longest such day).
  if (s.perDay !== undefined)
    return w.kind === 'upstream-day' ? s.perDay : s.perDay * Math.max(1, Math.ceil(w.ms / DAY_MS));
  if (!s.spends) return 0;
  const to = now + (HORIZON_DAYS + 2) * DAY_MS;
  if (w.kind === 'upstream-day') return maxInDay(s.spends, timeZone, now, to);
  return maxInWindow(s.spends, w.ms, to - w.ms);
}

function runsIn(s: Source, w: Window, timeZone: string, now: number): number | undefined {
  if (!s.baseRuns) return undefined;
  return demandOf({ ...s, spends: s.baseRuns }, w, timeZone, now);
}

function planBucket(
  config: YouTubeConfig,
  c: CredentialConfig,
  bucket: BucketConfig,
  sources: Source[],
  now: number,
): BucketPlan {
  const b = bucketDemand(config, c, bucket, sources, now);
  const checks: PlanCheck[] = [];
  const notes: string[] = [];
  tierChecks(b, checks);
  paceCheck(b, checks, notes);
  budgetChecks(b, checks);
  const lines = planLines(b, notes);
  return {
    credential: c.id,
    bucket: bucket.id,
    quota: bucket.quota,
    reserve: bucket.reserve,
    backfillHeadroom: bucket.backfillHeadroom,
    ceilings: { ...bucket.ceilings },
    window: b.window.kind,
    windowMs: b.window.ms,
    lines,
    scheduledUnits: b.scheduled,
    checks,
    notes,
    changes: [],
    fits: checks.every((k) => k.fits),
  };
}

/** One bucket of one credential, the sources that spend it and their demand in its window by tier. */
interface BucketDemand {
  config: YouTubeConfig;
  c: CredentialConfig;
  bucket: BucketConfig;
  sources: Source[];
  now: number;
  /** The bucket's window; an upstream day is checked as its longest, 25 hours. */
  window: Window;
  scheduled: number;
  manual: number;
  backfillSources: Source[];
  hasBackfill: boolean;
  backfillExpected: number;
  /** The most the matching sources spend together in any window `w`. */
  demand(pred: (s: Source) => boolean, w: Window): number;
}

function bucketDemand(
  config: YouTubeConfig,
  c: CredentialConfig,
  bucket: BucketConfig,
  sources: Source[],
  now: number,
): BucketDemand {
  const window: Window =
    bucket.window.kind === 'sliding'
      ? { kind: 'sliding', ms: bucket.window.ms }
      : { kind: 'upstream-day', ms: 25 * 3_600_000 };
  const demand = (pred: (s: Source) => boolean, w: Window) =>
    sources.filter(pred).reduce((n, s) => n + demandOf(s, w, c.timeZone, now), 0);
  const isTier = (t: Tier) => (s: Source) => s.line.tier === t && s.line.source !== 'backfill';
  const backfillSources = sources.filter((s) => s.line.source === 'backfill');
  return {
    config,
    c,
    bucket,
    sources,
    now,
    window,
    scheduled: demand(isTier('scheduled'), window),
    manual: demand(isTier('manual'), window),
    backfillSources,
    hasBackfill: backfillSources.length > 0,
    backfillExpected: demand(isTier('backfill'), window),
    demand,
  };
}

function addCheck(
  checks: PlanCheck[],
  kind: CheckKind,
  name: string,
  limit: number,
  w: Window,
  d: number,
  fixes: (over: number) => string[],
): void {
  const fits = d <= limit;
  checks.push({
    kind,
    name,
    limit,
    windowMs: w.ms,
    window: w.kind,
    demand: d,
    fits,
    over: fits ? 0 : d - limit,
    fixes: fits ? [] : fixes(d - limit),
  });
}

/** The scheduled ceiling, the headroom the backfill leaves, and the room left for manual calls. */
function tierChecks(b: BucketDemand, checks: PlanCheck[]): void {
  const { config, c, bucket, window: bw, scheduled, manual, hasBackfill } = b;
  if (scheduled > 0) {
    addCheck(checks, 'ceiling', 'scheduled ceiling', bucket.ceilings.scheduled, bw, scheduled, (over) => [
      `raise credentials[${config.credentials.indexOf(c)}].buckets.${bucket.id}.quota to at least ${fmt(bucket.quota + over)} (a quota increase from the upstream)`,
    ]);
  }
  if (hasBackfill && scheduled > 0) {
    // A backfill with a large backlog fills the bucket to its own ceiling; the scheduled jobs then
    // have the headroom above it.
    const room = bucket.ceilings.scheduled - bucket.ceilings.backfill;
    addCheck(checks, 'headroom', 'backfill headroom', room, bw, scheduled, () => [
      bucket.reserve + scheduled < bucket.quota
        ? `raise backfillHeadroom of ${bucket.id} to at least ${fmt(scheduled)} (now ${fmt(room)}), so the backfill leaves the scheduled jobs their units`
        : `the scheduled jobs need more than the quota less the reserve: no headroom can protect them from the backfill`,
    ]);
  }
  if (manual > 0) {
    const taken = hasBackfill ? bucket.ceilings.backfill + scheduled : scheduled;
    const room = Math.max(0, bucket.ceilings.manual - taken);
    addCheck(checks, 'manual', 'manual room', room, bw, manual, (over) => [
      `make ${fmt(over)} fewer units of manual calls a ${windowLabel({ window: bw.kind, windowMs: bw.ms })}, or move them to another credential`,
      hasBackfill
        ? `raise the reserve of ${bucket.id}: manual calls get the reserve and the headroom the scheduled jobs leave`
        : `raise the quota of ${bucket.id}`,
    ]);
  }
}

function paceCheck(b: BucketDemand, checks: PlanCheck[], notes: string[]): void {
  const { bucket } = b;
  if (!bucket.pace) return;
  const pw: Window = { kind: 'sliding', ms: bucket.pace.windowMs };
  const d = b.demand((s) => s.line.source !== 'backfill', pw);
  addCheck(checks, 'pace', 'pace', bucket.pace.limit, pw, d, () => [
    `raise the pace limit of ${bucket.id} to at least ${fmt(d)}`,
    'spread the regions further apart (schedules.trending.stagger)',
  ]);
  if (b.hasBackfill)
    notes.push(`the backfill spends the ${bucket.id} pace too: it takes what the scheduled jobs leave of it`);
}

/** Each budget of the credential against the calls it covers (the backfill aside: it only takes headroom). */
function budgetChecks(b: BucketDemand, checks: PlanCheck[]): void {
  const { c, bucket, sources, now } = b;
  for (const budget of c.budgets) {
    const covered = sources.filter(
      (s) => s.line.source !== 'backfill' && budgetCovers(budget, bucket.id, s.line.method, s.line.tier),
    );
    if (!covered.length) continue;
    const w: Window = { kind: 'sliding', ms: budget.windowMs };
    const d = covered.reduce((n, s) => n + demandOf(s, w, c.timeZone, now), 0);
    addCheck(checks, 'budget', `budget ${budget.id}`, budget.limit, w, d, (over) => {
      const fixes: string[] = [];
      const burst = covered.filter((s) => s.perDay !== undefined);
      for (const s of burst) {
        const calls = Math.max(0, Math.floor((s.perDay! - over) / s.line.cost));
        fixes.push(
          `make at most ${fmt(calls)} ${s.line.method} calls a day for ${s.line.id} (now ${fmt(s.perDay! / s.line.cost)})`,
        );
      }
      fixes.push(`raise budget ${budget.id}'s limit to at least ${fmt(d)}`);
      return fixes;
    });
  }
}

/** What each source spends in the bucket's window; a backfill line takes the headroom the others leave. */
function planLines(b: BucketDemand, notes: string[]): PlanLine[] {
  const { c, bucket, now, window: bw, scheduled, manual, backfillExpected } = b;
  const lines: PlanLine[] = b.sources
    .filter((s) => s.line.source !== 'backfill')
    .map((s) => {
      const runs = runsIn(s, bw, c.timeZone, now);
      return {
        ...s.line,
        units: demandOf(s, bw, c.timeZone, now),
        ...(runs !== undefined ? { runs } : {}),
        detail: s.line.detail.replace('{runs}', plural(runs ?? 0, 'run')),
      };
    });
  for (const s of b.backfillSources) {
    const shared = scheduled + manual + backfillExpected;
    let take = Math.max(0, bucket.ceilings.backfill - (scheduled > 0 ? scheduled : 0));
    let why = `up to its ceiling of ${fmt(bucket.ceilings.backfill)}${scheduled > 0 ? ` less what the scheduled jobs spend` : ''}`;
    for (const budget of c.budgets.filter((x) => budgetCovers(x, bucket.id, s.line.method, 'backfill'))) {
      const cap = budget.limit * Math.max(1, Math.ceil(bw.ms / budget.windowMs));
      if (cap < take) {
        take = cap;
        why = `capped by budget ${budget.id} (${fmt(budget.limit)} per ${windowLabel({ window: 'sliding', windowMs: budget.windowMs })})`;
      }
    }
    lines.push({ ...s.line, units: take, detail: `takes headroom only: ${why}` });
    if (shared === 0 && bucket.backfillHeadroom > 0)
      notes.push(
        `only the backfill spends ${bucket.id}: its headroom of ${fmt(bucket.backfillHeadroom)} units is never used; set backfillHeadroom: 0 on it to let the backfill use it`,
      );
  }
  return lines;
}

function fmt(n: number): string {
  return new Intl.NumberFormat('en-US').format(n);
}
