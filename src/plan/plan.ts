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
import type { BucketConfig, Config, CredentialConfig, ExpectedSpendConfig, Tier } from '../config/types.js';
import { budgetCovers } from '../guard/keys.js';
import { backfillMethod } from '../jobs/backfill.js';
import { cronRuns, maxInDay, maxInWindow, mergeSpends, type Spend } from './runs.js';

const DAY_MS = 86_400_000;
/** Whole days looked at: a week covers weekly cron patterns. */
const HORIZON_DAYS = 7;

export type SourceKind = 'trending' | 'backfill' | 'expected';

/** One source of spending in one bucket. */
export interface PlanLine {
  source: SourceKind;
  /** `trending`, `backfill` or the expected spend's id. */
  id: string;
  tier: Tier;
  method: string;
  /** Units per call. */
  cost: number;
  /** Units at most per bucket window (24 h sliding, or one upstream day); for the backfill, the most it can take. */
  units: number;
  /** Runs per bucket window at most (trending). */
  runs?: number;
  /** How `units` is made up, e.g. `8 regions × 1 chart × 4 pages × 24 runs × 1 unit`. */
  detail: string;
}

export type CheckKind = 'ceiling' | 'headroom' | 'manual' | 'pace' | 'budget';

/** One limit the schedules must stay under. */
export interface PlanCheck {
  kind: CheckKind;
  /** e.g. `units scheduled ceiling`, `units pace`, `budget manual-search`. */
  name: string;
  limit: number;
  /** Its window in ms (upstream-day: the longest day, 25 h). */
  windowMs: number;
  window: 'sliding' | 'upstream-day';
  /** Units the schedules spend at most within the window. */
  demand: number;
  fits: boolean;
  /** demand − limit when it does not fit, else 0. */
  over: number;
  /** What to change when it does not fit. */
  fixes: string[];
}

export interface BucketPlan {
  credential: string;
  bucket: string;
  quota: number;
  reserve: number;
  backfillHeadroom: number;
  ceilings: Record<Tier, number>;
  window: 'sliding' | 'upstream-day';
  windowMs: number;
  lines: PlanLine[];
  /** Units the scheduled tier spends at most per window. */
  scheduledUnits: number;
  checks: PlanCheck[];
  /** Advice that does not make the plan fail. */
  notes: string[];
  fits: boolean;
}

export interface PlanReport {
  fits: boolean;
  /** The credential the jobs spend. */
  jobsCredential: string;
  buckets: BucketPlan[];
  /** Every check that does not fit, as one line each. */
  problems: string[];
}

export interface PlanOptions {
  /** Where the week looked at starts (default now). */
  now?: number;
}

/** The credential the trending and backfill jobs spend: the first one configured. */
export function jobsCredential(config: Config): CredentialConfig {
  return config.credentials[0]!;
}

interface Source {
  line: Omit<PlanLine, 'units' | 'runs'>;
  /** Spends over the horizon (cron-based sources). */
  spends?: Spend[];
  /** Burst sources: units per upstream day. */
  perDay?: number;
  /** Trending: one run's units and the base runs (without stagger) for run counts. */
  runUnits?: number;
  baseRuns?: Spend[];
  perPageUnits?: number;
  regions?: number;
  perRegion?: number[];
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function planBudget(config: Config, options: PlanOptions = {}): PlanReport {
  const now = options.now ?? Date.now();
  const cred = jobsCredential(config);
  const buckets: BucketPlan[] = [];
  for (const c of config.credentials) {
    const sources = sourcesOf(config, c, cred.id === c.id, now);
    for (const bucket of Object.values(c.buckets)) {
      const mine = sources.filter((s) => s.bucket === bucket.id).map((s) => s.source);
      if (!mine.length) continue;
      buckets.push(planBucket(config, c, bucket, mine, now));
    }
  }
  const problems = buckets.flatMap((b) =>
    b.checks
      .filter((k) => !k.fits)
      .map(
        (k) =>
          `${b.credential}/${b.bucket}: ${k.name} ${fmt(k.limit)} per ${windowLabel(k)} is exceeded by ${fmt(k.over)} (schedules spend up to ${fmt(k.demand)})`,
      ),
  );
  return { fits: problems.length === 0, jobsCredential: cred.id, buckets, problems };
}

function sourcesOf(
  config: Config,
  c: CredentialConfig,
  runsJobs: boolean,
  now: number,
): Array<{ bucket: string; source: Source }> {
  const out: Array<{ bucket: string; source: Source }> = [];
  const to = now + (HORIZON_DAYS + 2) * DAY_MS;
  if (runsJobs) {
    const t = config.schedules.trending;
    const list = c.methods['videos.list']!;
    const base = cronRuns(t.cron, t.timeZone, now, to);
    const perRegion = config.regions.map(
      (r) => Math.max(1, config.categories[r]?.length ?? 0) * t.maxPages * list.cost,
    );
    const spends = mergeSpends(
      config.regions.map((_, i) => base.map((at) => ({ at: at + i * t.staggerMs, units: perRegion[i]! }))),
    );
    const charts = config.regions.reduce((n, r) => n + Math.max(1, config.categories[r]?.length ?? 0), 0);
    out.push({
      bucket: list.bucket,
      source: {
        line: {
          source: 'trending',
          id: 'trending',
          tier: 'scheduled',
          method: 'videos.list',
          cost: list.cost,
          detail:
            charts === config.regions.length
              ? `${plural(config.regions.length, 'region')} × ${plural(t.maxPages, 'page')} × {runs} × ${plural(list.cost, 'unit')}`
              : `${plural(charts, 'chart')} in ${plural(config.regions.length, 'region')} × ${plural(t.maxPages, 'page')} × {runs} × ${plural(list.cost, 'unit')}`,
        },
        spends,
        runUnits: perRegion.reduce((a, b) => a + b, 0),
        baseRuns: base.map((at) => ({ at, units: 1 })),
        perPageUnits: charts * list.cost,
        regions: config.regions.length,
        perRegion,
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
  if (s.perDay !== undefined) return s.perDay * Math.max(1, Math.ceil(w.ms / DAY_MS));
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
  config: Config,
  c: CredentialConfig,
  bucket: BucketConfig,
  sources: Source[],
  now: number,
): BucketPlan {
  const bw: Window =
    bucket.window.kind === 'sliding'
      ? { kind: 'sliding', ms: bucket.window.ms }
      : { kind: 'upstream-day', ms: 25 * 3_600_000 };
  const demand = (pred: (s: Source) => boolean, w: Window) =>
    sources.filter(pred).reduce((n, s) => n + demandOf(s, w, c.timeZone, now), 0);
  const isTier = (t: Tier) => (s: Source) => s.line.tier === t && s.line.source !== 'backfill';
  const scheduled = demand(isTier('scheduled'), bw);
  const manual = demand(isTier('manual'), bw);
  const backfillSources = sources.filter((s) => s.line.source === 'backfill');
  const hasBackfill = backfillSources.length > 0;
  const backfillExpected = demand(isTier('backfill'), bw);

  const checks: PlanCheck[] = [];
  const notes: string[] = [];
  const trending = sources.find((s) => s.line.source === 'trending');
  const check = (
    kind: CheckKind,
    name: string,
    limit: number,
    w: Window,
    d: number,
    fixes: (over: number) => string[],
  ) => {
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
  };

  if (scheduled > 0) {
    check('ceiling', 'scheduled ceiling', bucket.ceilings.scheduled, bw, scheduled, (over) =>
      reduceScheduled(config, c, bucket, trending, bw, over, now, [
        `raise credentials[${config.credentials.indexOf(c)}].buckets.${bucket.id}.quota to at least ${fmt(bucket.quota + over)} (a quota increase from the upstream)`,
      ]),
    );
  }
  if (hasBackfill && scheduled > 0) {
    // A backfill with a large backlog fills the bucket to its own ceiling; the scheduled jobs then
    // have the headroom above it.
    const room = bucket.ceilings.scheduled - bucket.ceilings.backfill;
    check('headroom', 'backfill headroom', room, bw, scheduled, (over) =>
      reduceScheduled(config, c, bucket, trending, bw, over, now, [
        bucket.reserve + scheduled < bucket.quota
          ? `raise backfillHeadroom of ${bucket.id} to at least ${fmt(scheduled)} (now ${fmt(room)}), so the backfill leaves the scheduled jobs their units`
          : `the scheduled jobs need more than the quota less the reserve: no headroom can protect them from the backfill`,
      ]),
    );
  }
  if (manual > 0) {
    const taken = hasBackfill ? bucket.ceilings.backfill + scheduled : scheduled;
    const room = Math.max(0, bucket.ceilings.manual - taken);
    check('manual', 'manual room', room, bw, manual, (over) => [
      `make ${fmt(over)} fewer units of manual calls a ${windowLabel({ window: bw.kind, windowMs: bw.ms })}, or move them to another credential`,
      hasBackfill
        ? `raise the reserve of ${bucket.id}: manual calls get the reserve and the headroom the scheduled jobs leave`
        : `raise the quota of ${bucket.id}`,
    ]);
  }
  if (bucket.pace) {
    const pw: Window = { kind: 'sliding', ms: bucket.pace.windowMs };
    const d = demand((s) => s.line.source !== 'backfill', pw);
    check('pace', 'pace', bucket.pace.limit, pw, d, (over) =>
      reduceScheduled(config, c, bucket, trending, pw, over, now, [
        `raise the pace limit of ${bucket.id} to at least ${fmt(d)}`,
        'spread the regions further apart (schedules.trending.stagger)',
      ]),
    );
    if (hasBackfill)
      notes.push(
        `the backfill spends the ${bucket.id} pace too: it takes what the scheduled jobs leave of it`,
      );
  }
  for (const b of c.budgets) {
    const covered = sources.filter(
      (s) => s.line.source !== 'backfill' && budgetCovers(b, bucket.id, s.line.method, s.line.tier),
    );
    if (!covered.length) continue;
    const w: Window = { kind: 'sliding', ms: b.windowMs };
    const d = covered.reduce((n, s) => n + demandOf(s, w, c.timeZone, now), 0);
    check('budget', `budget ${b.id}`, b.limit, w, d, (over) => {
      const fixes: string[] = [];
      const burst = covered.filter((s) => s.perDay !== undefined);
      for (const s of burst) {
        const calls = Math.max(0, Math.floor((s.perDay! - over) / s.line.cost));
        fixes.push(
          `make at most ${fmt(calls)} ${s.line.method} calls a day for ${s.line.id} (now ${fmt(s.perDay! / s.line.cost)})`,
        );
      }
      if (covered.some((s) => s.line.source === 'trending'))
        fixes.push(...reduceScheduled(config, c, bucket, trending, w, over, now, []));
      fixes.push(`raise budget ${b.id}'s limit to at least ${fmt(d)}`);
      return fixes;
    });
  }

  const lines: PlanLine[] = sources
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
  for (const s of backfillSources) {
    const shared = scheduled + manual + backfillExpected;
    let take = Math.max(0, bucket.ceilings.backfill - (scheduled > 0 ? scheduled : 0));
    let why = `up to its ceiling of ${fmt(bucket.ceilings.backfill)}${scheduled > 0 ? ` less what the scheduled jobs spend` : ''}`;
    for (const b of c.budgets.filter((x) => budgetCovers(x, bucket.id, s.line.method, 'backfill'))) {
      const cap = b.limit * Math.max(1, Math.ceil(bw.ms / b.windowMs));
      if (cap < take) {
        take = cap;
        why = `capped by budget ${b.id} (${fmt(b.limit)} per ${windowLabel({ window: 'sliding', windowMs: b.windowMs })})`;
      }
    }
    lines.push({ ...s.line, units: take, detail: `takes headroom only: ${why}` });
    if (shared === 0 && bucket.backfillHeadroom > 0)
      notes.push(
        `only the backfill spends ${bucket.id}: its headroom of ${fmt(bucket.backfillHeadroom)} units is never used; set backfillHeadroom: 0 on it to let the backfill use it`,
      );
  }

  return {
    credential: c.id,
    bucket: bucket.id,
    quota: bucket.quota,
    reserve: bucket.reserve,
    backfillHeadroom: bucket.backfillHeadroom,
    ceilings: { ...bucket.ceilings },
    window: bw.kind,
    windowMs: bw.ms,
    lines,
    scheduledUnits: scheduled,
    checks,
    notes,
    fits: checks.every((k) => k.fits),
  };
}

/**
 * What to change so the trending schedule spends `over` fewer units per window: fewer runs, fewer
 * pages, or some regions on another credential. `avail` is what trending may spend (its demand − over).
 */
function reduceScheduled(
  config: Config,
  c: CredentialConfig,
  bucket: BucketConfig,
  trending: Source | undefined,
  w: Window,
  over: number,
  now: number,
  extra: string[],
): string[] {
  const fixes: string[] = [];
  if (trending?.runUnits !== undefined && trending.baseRuns && trending.perRegion) {
    const t = config.schedules.trending;
    const runs = runsIn(trending, w, c.timeZone, now) ?? 0;
    const units = demandOf(trending, w, c.timeZone, now);
    const avail = units - over;
    const per = windowLabel({ window: w.kind, windowMs: w.ms });
    const fitRuns = Math.floor(avail / trending.runUnits);
    if (fitRuns >= 1 && fitRuns < runs) {
      const every = Math.ceil(w.ms / 60_000 / fitRuns);
      fixes.push(
        `run trending at most ${plural(fitRuns, 'time')} per ${per} (now ${runs}), e.g. once every ${plural(every, 'minute')} or less often: change schedules.trending.cron`,
      );
    }
    const perPage = (trending.perPageUnits ?? 0) * runs;
    const fitPages = perPage > 0 ? Math.floor(avail / perPage) : 0;
    if (fitPages >= 1 && fitPages < t.maxPages)
      fixes.push(
        `fetch at most ${plural(fitPages, 'page')} per chart (now ${t.maxPages}): set schedules.trending.maxPages: ${fitPages}`,
      );
    const perRegionWindow = units / (trending.regions || 1);
    if (perRegionWindow > 0) {
      const move = Math.min(trending.regions ?? 0, Math.ceil(over / perRegionWindow));
      const others = config.credentials.filter((x) => x.id !== c.id && x.buckets[bucket.id]);
      fixes.push(
        `move ${plural(move, 'region')} to ${others.length ? `credential ${others.map((x) => x.id).join(' or ')}` : 'another credential (a second project with its own quota)'}`,
      );
    }
  }
  return [...fixes, ...extra];
}

function fmt(n: number): string {
  return new Intl.NumberFormat('en-US').format(n);
}

/** `24h`, `1h`, `upstream day`. */
export function windowLabel(k: { window: 'sliding' | 'upstream-day'; windowMs: number }): string {
  if (k.window === 'upstream-day') return 'upstream day';
  const h = k.windowMs / 3_600_000;
  if (Number.isInteger(h)) return `${h}h`;
  const m = k.windowMs / 60_000;
  if (Number.isInteger(m)) return `${m}m`;
  return `${k.windowMs / 1000}s`;
}
