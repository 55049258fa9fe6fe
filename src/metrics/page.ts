/**
 * The status page served at `/` by `quota-guard run --http` and `quota-guard serve`: one
 * server-rendered HTML document with inline CSS and SVG (no script, no build step, nothing fetched
 * from elsewhere, so it works offline), refreshing itself, readable on a phone.
 *
 * - Per bucket, a chart of the units its window held over the window (the upstream day, or the last
 *   24 h of a sliding window): one point per recorded run (what the ledger held when it ended) and
 *   one for now, against the quota, the reserve (above quota − reserve) and a pacing line: the
 *   guard's line for the backfill where it paces it over the upstream day (with what the backfill
 *   spent today), else an even pace from 0 at the window's start to quota − reserve at its end.
 * - At the top, the summary (src/metrics/summary.ts): the worst thing now in one line, with the
 *   command that acts on it; a blocked bucket's card says until when, why, who reported it and the
 *   command too.
 * - Every region's last successful fetch (stale ones say since when and why, the last run's whole
 *   reason folded under it), blocks, and the last runs (a long reason opens with a tap: nothing is
 *   said on hover only). Regions only where the config runs the YouTube application.
 */

import { startOfDay } from '../calendar-day.js';
import type { Config, Tier } from '../config/types.js';
import { type PacingLine, pacingLineAt } from '../guard/pacing.js';
import { type BucketStatus, quotaStatus, type StatusReport } from '../guard/status.js';
import type { RunHistory, RunSummary } from '../history/types.js';
import type { Ledger } from '../ledger/types.js';
import { type LastReconcile, RECONCILE_JOB_PREFIX } from '../reconcile/runs.js';
import { terminalText } from '../terminal-text.js';
import { luxon } from '../time-libs.js';
import { scheduledNeed } from '../youtube/cron-runs.js';
import { type RegionFreshness, regionFreshness } from '../youtube/freshness.js';
import { backfillMethod } from '../youtube/job-library/backfill.js';
import { youtubeConfigured } from '../youtube/trending-spend.js';
import { recordedLateNotices } from './late-notice.js';
import { reconciledBucket, reconcileLine, reconcileNotices, reconcileView } from './reconcile-view.js';
import { type SummaryLine, summaryLines, unblockCommand } from './summary.js';

export interface StatusPageData {
  report: StatusReport;
  freshness?: { periodMs: number; staleAfterMs: number; regions: RegionFreshness[] };
  /** Runs newest first (the page shows the last ones and charts those within each window). */
  runs: RunSummary[];
  /** The operator's zone for the second clock (default: this host's). */
  localZone?: string;
  /** Seconds between reloads (default 30). */
  refreshSeconds?: number;
  /** The guard's backfill pacing line per `credential/bucket`, where the guard paces the backfill. */
  pacing?: Record<string, PacingLine>;
  /**
   * Whether the config runs the YouTube application (`youtubeConfigured`): its regions and its runs'
   * videos are shown only then (default true).
   */
  application?: boolean;
  /**
   * Lines for the summary at the top from other parts of the program (entries recorded late, drift
   * from the upstream's count), placed among its own by severity.
   */
  notices?: SummaryLine[];
  /** Per project a credential names: its last reconcile and its last successful one's figures. */
  reconcile?: LastReconcile[];
}

/** The guard's pacing line of the backfill on a credential's bucket (Guard.pacingLine). */
export type PacingSource = (credential: string, bucket: string) => Promise<PacingLine>;

/** Runs read for the charts: a day of 8 regions every 5 minutes and a backfill fits. */
const CHART_RUNS = 5_000;
const LAST_RUNS = 20;

/** Read what the page shows: the ledger's report, region freshness and the runs in the longest window. */
export async function statusPageData(
  config: Config,
  ledger: Ledger,
  history: RunHistory | undefined,
  options: { localZone?: string; refreshSeconds?: number; pacing?: PacingSource } = {},
): Promise<StatusPageData> {
  const report = await quotaStatus(config, ledger, { scheduledNeed: scheduledNeed(config) });
  const now = Date.parse(report.at);
  const { pacing, ...rest } = options;
  const application = youtubeConfigured(config);
  const data: StatusPageData = { report, runs: [], application, ...rest };
  const late = recordedLateNotices(report);
  if (late.length > 0) data.notices = late;
  if (pacing && application) {
    // The line is the backfill's: drawn on the bucket the backfill spends.
    data.pacing = {};
    for (const c of config.credentials) {
      const bucket = c.methods[backfillMethod(c)]?.bucket;
      if (bucket === undefined || !report.credentials.some((r) => r.id === c.id)) continue;
      const line = await pacing(c.id, bucket).catch(() => undefined);
      if (line && line.allowed !== null) data.pacing[`${c.id}/${bucket}`] = line;
    }
  }
  if (!history) return data;
  const since = Math.min(
    ...report.credentials.flatMap((c) => c.buckets.map((b) => windowOf(b, c.timeZone, now)[0])),
  );
  const reconcile = await reconcileView(config, history);
  if (reconcile) {
    data.reconcile = reconcile;
    data.notices = [...(data.notices ?? []), ...reconcileNotices(reconcile, now)];
  }
  try {
    if (application) data.freshness = await regionFreshness(config, history, now);
    data.runs = await history.list({
      credentials: report.credentials.map((c) => c.id),
      since: Number.isFinite(since) ? since : now - 86_400_000,
      limit: CHART_RUNS,
    });
  } catch {
    // The page still shows the ledger when the history cannot be read.
  }
  return data;
}

/** The bucket's current window: the upstream day, or the last windowMs of a sliding log. */
export function windowOf(b: BucketStatus, timeZone: string, nowMs: number): [number, number] {
  if (b.window === 'upstream-day' && b.resetsAt) return [startOfDay(timeZone, nowMs), Date.parse(b.resetsAt)];
  return [nowMs - b.windowMs, nowMs];
}

/**
 * The pacing line: where the guard paces the backfill over the upstream day, its line (the units the
 * backfill may have spent by each moment: linear, then lifted when the day's last scheduled run has
 * started); elsewhere an even pace from 0 at the window's start to what the scheduled tier may spend
 * at its end.
 */
export function pacingLine(
  b: BucketStatus,
  start: number,
  end: number,
  guard?: PacingLine,
): { kind: 'guard' | 'even'; points: Array<[number, number]> } {
  if (!guard)
    return {
      kind: 'even',
      points: [
        [start, 0],
        [end, b.ceilings.scheduled],
      ],
    };
  const lift = Math.min(Math.max(guard.burstFrom, guard.dayStart), guard.dayEnd);
  return {
    kind: 'guard',
    points: [
      [guard.dayStart, 0],
      [lift, pacingLineAt(guard, lift - 1)],
      [lift, pacingLineAt(guard, lift)],
      [guard.dayEnd, pacingLineAt(guard, guard.dayEnd)],
    ],
  };
}

export interface ChartPoint {
  at: number;
  used: number;
  /** `run`: what the ledger held when a run ended; `start`: an upstream day's empty log; `now`. */
  kind: 'run' | 'start' | 'now';
}

/** The chart's points for one bucket of one credential, oldest first. */
export function chartPoints(
  b: BucketStatus,
  credential: string,
  timeZone: string,
  runs: readonly RunSummary[],
  nowMs: number,
): ChartPoint[] {
  const [start] = windowOf(b, timeZone, nowMs);
  const points: ChartPoint[] = [];
  if (b.window === 'upstream-day') points.push({ at: start, used: 0, kind: 'start' });
  for (const r of runs) {
    const used = r.used[b.id];
    if (r.credential !== credential || used === undefined || r.finishedAt < start || r.finishedAt > nowMs)
      continue;
    points.push({ at: r.finishedAt, used, kind: 'run' });
  }
  points.sort((x, y) => x.at - y.at);
  const drawn = thinned(points, start, nowMs);
  drawn.push({ at: nowMs, used: b.used, kind: 'now' });
  return drawn;
}

/**
 * Run points a chart draws at most. A run is a point, and clients record runs (`POST /v1/runs`):
 * 2,000 runs in a day took the page to 1.5 MB. Past this many, the window is cut into this many
 * equal slots and each slot keeps its highest point, which a chart 640 units wide cannot tell
 * from all of them.
 */
export const MAX_CHART_RUN_POINTS = 320;

function thinned(points: ChartPoint[], start: number, end: number): ChartPoint[] {
  const runs = points.filter((p) => p.kind === 'run');
  if (runs.length <= MAX_CHART_RUN_POINTS) return points;
  const slot = Math.max(1, (end - start) / MAX_CHART_RUN_POINTS);
  const kept = new Map<number, ChartPoint>();
  for (const p of runs) {
    const i = Math.floor((p.at - start) / slot);
    const q = kept.get(i);
    if (!q || p.used >= q.used) kept.set(i, p);
  }
  return [...points.filter((p) => p.kind !== 'run'), ...kept.values()].sort((x, y) => x.at - y.at);
}

/**
 * Text as HTML, and safe to show: markup escaped, and control and bidirectional characters (which
 * reorder what follows them) replaced as the CLI replaces them (src/terminal-text.ts), for every
 * field a client can set — reasons, tags, job names, token names.
 */
const esc = (s: string): string =>
  terminalText(s).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
const num = (n: number): string => new Intl.NumberFormat('en-US').format(n);

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  return h % 24 ? `${Math.floor(h / 24)}d ${h % 24}h` : `${Math.floor(h / 24)}d`;
}

function clock(ms: number, zone: string, withDate = false): string {
  const { DateTime } = luxon();
  return DateTime.fromMillis(ms, { zone }).toFormat(withDate ? 'MMM d HH:mm ZZZZ' : 'HH:mm:ss ZZZZ');
}

const W = 640;
const H = 250;
const PAD = { left: 62, right: 16, top: 14, bottom: 34 };

function chart(
  b: BucketStatus,
  points: ChartPoint[],
  timeZone: string,
  start: number,
  end: number,
  guardLine?: PacingLine,
): string {
  const top = Math.max(b.quota, ...points.map((p) => p.used)) * 1.06;
  const x = (t: number) => PAD.left + ((t - start) / Math.max(1, end - start)) * (W - PAD.left - PAD.right);
  const y = (u: number) => H - PAD.bottom - (u / top) * (H - PAD.top - PAD.bottom);
  const f = (n: number) => n.toFixed(1);
  const ceiling = b.ceilings.scheduled;
  const parts: string[] = [];
  // Horizontal grid: quarters of the quota.
  for (let i = 0; i <= 4; i++) {
    const u = (b.quota * i) / 4;
    parts.push(
      `<line class="grid" x1="${PAD.left}" x2="${W - PAD.right}" y1="${f(y(u))}" y2="${f(y(u))}"/>`,
      `<text class="tick" x="${PAD.left - 6}" y="${f(y(u) + 4)}" text-anchor="end">${num(Math.round(u))}</text>`,
    );
  }
  // Time ticks in the credential's zone.
  const span = end - start;
  // Few enough to stay readable when the chart is shrunk to a phone's width.
  const ticks = 4;
  const { DateTime } = luxon();
  for (let i = 0; i <= ticks; i++) {
    const t = start + (span * i) / ticks;
    const label = DateTime.fromMillis(t, { zone: timeZone }).toFormat(
      span > 6 * 3_600_000 ? 'HH:mm' : 'HH:mm:ss',
    );
    parts.push(
      `<text class="tick" x="${f(x(t))}" y="${H - 8}" text-anchor="${i === 0 ? 'start' : i === ticks ? 'end' : 'middle'}">${label}</text>`,
    );
  }
  // The reserve: the band between the scheduled tier's ceiling and the quota.
  parts.push(
    `<rect class="reserve" x="${PAD.left}" y="${f(y(b.quota))}" width="${W - PAD.left - PAD.right}" height="${f(y(ceiling) - y(b.quota))}"/>`,
    `<line class="quota" x1="${PAD.left}" x2="${W - PAD.right}" y1="${f(y(b.quota))}" y2="${f(y(b.quota))}"/>`,
    `<line class="ceiling" x1="${PAD.left}" x2="${W - PAD.right}" y1="${f(y(ceiling))}" y2="${f(y(ceiling))}"/>`,
  );
  const pace = pacingLine(b, start, end, guardLine);
  // Drawn within the plot area only (the guard's line spans the upstream day, the chart the window).
  const clip = `clip-${b.id.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  parts.push(
    `<clipPath id="${clip}"><rect x="${PAD.left}" y="0" width="${W - PAD.left - PAD.right}" height="${H}"/></clipPath>`,
    `<polyline class="pace ${pace.kind}" clip-path="url(#${clip})" data-pace="${pace.kind}" points="${pace.points.map(([t, u]) => `${f(x(t))},${f(y(u))}`).join(' ')}"/>`,
  );
  if (guardLine) {
    const [cx, cy] = [f(x(points[points.length - 1]!.at)), f(y(guardLine.spentToday))];
    parts.push(
      `<rect class="spent" x="${Number(cx) - 4}" y="${Number(cy) - 4}" width="8" height="8" transform="rotate(45 ${cx} ${cy})" data-backfill-today="${guardLine.spentToday}"><title>the backfill spent ${num(guardLine.spentToday)} units today</title></rect>`,
    );
  }
  const now = points[points.length - 1]!;
  parts.push(
    `<line class="now" x1="${f(x(now.at))}" x2="${f(x(now.at))}" y1="${PAD.top}" y2="${H - PAD.bottom}"/>`,
  );
  const line = points.map((p) => `${f(x(p.at))},${f(y(p.used))}`).join(' ');
  const first = points[0]!;
  parts.push(
    `<polygon class="area" points="${f(x(first.at))},${f(y(0))} ${line} ${f(x(now.at))},${f(y(0))}"/>`,
    `<polyline class="used" points="${line}"/>`,
  );
  parts.push(
    '<g class="points">',
    ...points.map(
      (p) =>
        `<circle class="pt ${p.kind}" cx="${f(x(p.at))}" cy="${f(y(p.used))}" r="${p.kind === 'now' ? 4 : 2.2}" data-kind="${p.kind}" data-at="${p.at}" data-used="${p.used}"><title>${num(p.used)} units at ${clock(p.at, timeZone)}</title></circle>`,
    ),
    '</g>',
  );
  const label = `${b.id}: ${num(b.used)} of ${num(b.quota)} units used; reserve ${num(b.reserve)}`;
  return `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(label)}" data-bucket="${esc(b.id)}" data-quota="${b.quota}" data-ceiling="${ceiling}">${parts.join('')}</svg>`;
}

const STYLE = `
:root{color-scheme:light dark;--fg:#1d2433;--muted:#667085;--bg:#f6f7f9;--card:#fff;--line:#e4e7ec;
--used:#2563eb;--area:rgba(37,99,235,.14);--quota:#d92d20;--ceiling:#f79009;--reserve:rgba(247,144,9,.12);
--pace:#98a2b3;--backfill:#7a5af8;--ok:#067647;--okbg:#ecfdf3;--bad:#b42318;--badbg:#fef3f2}
@media (prefers-color-scheme:dark){:root{--fg:#e4e7ec;--muted:#98a2b3;--bg:#0c111d;--card:#161b26;--line:#2a3140;
--area:rgba(96,165,250,.18);--used:#60a5fa;--okbg:#053321;--ok:#75e0a7;--badbg:#55160c;--bad:#fda29b}}
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
color:var(--fg);background:var(--bg)}main{max-width:980px;margin:0 auto;padding:16px}
header{display:flex;flex-wrap:wrap;align-items:baseline;gap:4px 14px;margin-bottom:8px}
h1{font-size:20px;margin:0}h2{font-size:16px;margin:22px 0 8px}h3{font-size:15px;margin:0}
.muted{color:var(--muted)}.card{background:var(--card);border:1px solid var(--line);border-radius:10px;
padding:12px 14px;margin:10px 0}.figs{display:flex;flex-wrap:wrap;gap:2px 16px;margin:4px 0 6px;font-size:14px}
.figs b{font-variant-numeric:tabular-nums}svg.chart{width:100%;height:auto;display:block}
.grid{stroke:var(--line);stroke-width:1}.tick{fill:var(--muted);font-size:13px}
.quota{stroke:var(--quota);stroke-width:1.5;stroke-dasharray:6 4}.ceiling{stroke:var(--ceiling);stroke-width:1.5;stroke-dasharray:3 3}
.reserve{fill:var(--reserve)}.pace{fill:none;stroke:var(--pace);stroke-width:1.5;stroke-dasharray:2 4}
.pace.guard{stroke:var(--backfill);stroke-dasharray:6 3}.spent{fill:var(--backfill)}
.now{stroke:var(--muted);stroke-width:1;stroke-dasharray:1 3}.area{fill:var(--area)}
.used{fill:none;stroke:var(--used);stroke-width:2;stroke-linejoin:round}.pt{fill:var(--used)}.pt.now{stroke:var(--card);stroke-width:2}
.legend{display:flex;flex-wrap:wrap;gap:2px 14px;font-size:12px;color:var(--muted);margin-top:4px}
.legend i{display:inline-block;width:16px;height:0;border-top:2px solid;vertical-align:middle;margin-right:5px}
.scroll{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);white-space:nowrap}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.why{white-space:normal;min-width:14em}
.badge{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;font-weight:600}
.ok{color:var(--ok);background:var(--okbg)}.bad{color:var(--bad);background:var(--badbg)}
.regions{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px}
.region{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:6px 10px}
.buckets{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,430px),1fr));gap:0 12px}
.region b{font-size:15px}.blocked{border-color:var(--bad)}footer{margin:24px 0 8px;font-size:12px;color:var(--muted)}
.frees b{font-variant-numeric:tabular-nums}.region .why{font-size:13px;margin-top:2px;overflow-wrap:anywhere}
td.until{white-space:normal;min-width:9em}table.blocks td.why{overflow-wrap:anywhere}
table.runs td.why{min-width:0;white-space:normal;max-width:26em}.unit{display:none}
details summary{cursor:pointer;color:var(--fg)}details[open] summary{margin-bottom:2px}
table.runs details:not([open]) summary{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.summary{border-radius:10px;padding:10px 14px;margin:6px 0 12px;border:1px solid var(--line);background:var(--card)}
.summary.bad{border-color:var(--bad);background:var(--badbg)}.summary.ok{border-color:var(--ok);background:var(--okbg)}
.summary .headline{margin:0;font-weight:600}.summary ul{margin:6px 0 0;padding-left:18px}.summary li{margin:2px 0}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere}.cmd{white-space:normal}
.blockinfo{font-size:14px;margin:4px 0 8px;padding:6px 10px;border-left:3px solid var(--bad);overflow-wrap:anywhere}
@media (max-width:560px){main{padding:10px}th,td{padding:4px 6px}
table.stack,table.stack tbody{display:block;width:100%}table.stack thead{display:none}table.stack tr{display:block;padding:6px 0;border-bottom:1px solid var(--line)}
table.stack td{display:inline;border:0;padding:0 6px 0 0;white-space:normal}
table.stack td.why{display:block;min-width:0;max-width:none}table.blocks td{display:block}
table.runs td.why{font-size:13px;max-width:none}.unit{display:inline}}
`;

/** The amount the free-up figure is about, as `status`'s `next 100`. */
const NEXT = '100';

/** When the scheduled tier can spend NEXT units: now, or in how long and at what time (blocks included). */
function freesUp(b: BucketStatus, zone: string, local: string, nowMs: number): string {
  const ms = b.spendableInMs[NEXT];
  if (ms === null || ms === undefined) return `<b>-</b> <span class="muted">(above the ceiling)</span>`;
  if (ms === 0) return '<b>now</b>';
  const at = nowMs + ms;
  return `<b>in ${ago(ms)}</b> <span class="muted">· ${clock(at, zone, true)}${local !== zone ? ` · ${clock(at, local, true)} here` : ''}</span>`;
}

/**
 * Why a stale region is stale, in a line: its last run's outcome and reason; a reason that names a
 * block the Blocks table shows is said as the block, not repeated whole.
 */
function staleReason(
  region: string,
  runs: readonly RunSummary[],
  report: StatusReport,
  nowMs: number,
): string {
  const last = runs.find((r) => r.labels['region'] === region);
  if (!last) return 'no run recorded in the window';
  const when = `${ago(nowMs - last.finishedAt)} ago`;
  if (last.outcome === 'done') return `last run ${when} was done; none since`;
  // The guard's stop names the block as `<credential>/<bucket> is blocked` or, when the upstream
  // said quotaExceeded, `for <credential>/<bucket> ... bucket blocked`.
  for (const c of report.credentials)
    for (const b of c.buckets)
      if (
        c.id === last.credential &&
        b.blockedUntil &&
        last.reason?.includes(`${c.id}/${b.id}`) &&
        last.reason.includes('blocked')
      )
        return `${esc(last.outcome)} ${when}: ${esc(b.id)} blocked, lifts in ${ago(Date.parse(b.blockedUntil) - nowMs)} <span class="muted">(Blocks)</span>`;
  return `${esc(last.outcome)} ${when}: ${esc(firstLine(last.reason ?? 'no reason recorded'))}`;
}

/** The first sentence or 90 characters of a reason, whichever is shorter. */
function firstLine(s: string): string {
  const cut = (s.split(/(?<=[.;])\s/)[0] ?? s).replace(/[.;]$/, '');
  return [...cut].length <= 90 ? cut : `${[...cut].slice(0, 89).join('')}…`;
}

const plural = (n: number, one: string): string => (n === 1 ? one : `${one}s`);

/** A reason in full: short ones as they are, a long one as its first line that a tap opens. */
function tapToRead(reason: string): string {
  const line = firstLine(reason);
  if (line === reason.replace(/[.;]$/, '')) return esc(reason);
  return `<details><summary>${esc(line)}</summary>${esc(reason)}</details>`;
}

/** The bucket's figures in its project's last successful reconcile, where there is one. */
function reconcileFigures(
  d: StatusPageData,
  credential: string,
  bucket: string,
  zone: string,
  nowMs: number,
) {
  const r = reconciledBucket(d.reconcile, credential, bucket);
  if (!r) return '';
  return `<p class="reconciled muted" data-upstream="${r.bucket.upstream}" data-outside="${r.bucket.outside}">${esc(
    reconcileLine(r, nowMs, (ms) => clock(ms, zone)),
  )}</p>`;
}

/** The summary at the top: the worst thing now in one line, then the rest, each with its command. */
function summary(d: StatusPageData, nowMs: number, local: string): string {
  const lines = summaryLines(
    {
      report: d.report,
      ...(d.freshness ? { freshness: d.freshness } : {}),
      runs: d.runs,
      ...(d.notices ? { notices: d.notices } : {}),
    },
    {
      until: (ms, zone) => `${clock(ms, zone, true)} (in ${ago(ms - nowMs)})`,
      at: (ms) => clock(ms, local, true),
    },
  );
  const item = (l: SummaryLine) =>
    `${esc(l.text)}${l.command ? ` <span class="cmd">— <code>${esc(l.command)}</code></span>` : ''}`;
  const [head, ...rest] = lines;
  return `<section class="summary ${head!.severity}" data-severity="${head!.severity}"><p class="headline">${item(head!)}</p>${
    rest.length ? `<ul>${rest.map((l) => `<li class="${l.severity}">${item(l)}</li>`).join('')}</ul>` : ''
  }</section>`;
}

/** On a blocked bucket's card: until when, why and who reported it, and the command that lifts it. */
function blockInfo(credential: string, b: BucketStatus, zone: string, local: string, nowMs: number): string {
  const until = Date.parse(b.blockedUntil!);
  return `<div class="blockinfo"><b>Blocked until ${clock(until, zone, true)}</b> (in ${ago(until - nowMs)}${local !== zone ? ` · ${clock(until, local, true)} here` : ''})<br>${esc(
    b.blockedReason ?? 'no reason recorded',
  )}<br>Once the upstream has the quota back: <code>${esc(unblockCommand(credential, b.id))}</code></div>`;
}

/** A stale region's card: since when, why in a line, and its last run's whole reason a tap away. */
function staleCard(
  r: RegionFreshness,
  staleAfterMs: number,
  runs: readonly RunSummary[],
  report: StatusReport,
  nowMs: number,
  local: string,
): string {
  const since =
    r.lastSuccessAt === null ? '' : `stale since ${clock(r.lastSuccessAt + staleAfterMs, local)} · `;
  const last = runs.find((x) => x.labels.region === r.region);
  const full = last?.reason
    ? `<details><summary>last run's reason</summary>${esc(last.reason)}</details>`
    : '';
  return `<div class="why">${since}${staleReason(r.region, runs, report, nowMs)}${full}</div>`;
}

function outcomeBadge(outcome: string): string {
  return `<span class="badge ${outcome === 'done' ? 'ok' : 'bad'}">${esc(outcome)}</span>`;
}

/** The whole page. */
export function renderStatusPage(d: StatusPageData): string {
  const { report } = d;
  const now = Date.parse(report.at);
  const local = d.localZone ?? luxon().DateTime.local().zoneName ?? 'UTC';
  const refresh = d.refreshSeconds ?? 30;
  const body: string[] = [];
  const first = report.credentials[0]?.timeZone ?? 'UTC';
  body.push(
    '<header><h1>quota-guard</h1>',
    `<span class="muted">${esc(report.store)} ledger · ${clock(now, first)}${local !== first ? ` · ${clock(now, local)} here` : ''}</span></header>`,
    summary(d, now, local),
  );
  const blocks: string[] = [];
  for (const c of report.credentials) {
    body.push(
      `<h2>Credential ${esc(c.id)} <span class="muted">· ${esc(c.profile)} · day in ${esc(c.timeZone)}</span></h2>`,
      '<div class="buckets">',
    );
    for (const b of c.buckets) {
      const [start, end] = windowOf(b, c.timeZone, now);
      const points = chartPoints(b, c.id, c.timeZone, d.runs, now);
      const guardLine = d.pacing?.[`${c.id}/${b.id}`];
      const held = (t: Tier) =>
        `<b>${num(b.spendable[t])}</b>${b.spendableLimitedBy[t] ? ` <span class="muted">(${esc(b.spendableLimitedBy[t]!)})</span>` : ''}`;
      if (b.blockedUntil)
        blocks.push(
          `<tr><td>${esc(c.id)} / ${esc(b.id)}</td><td class="until"><b>in ${ago(Date.parse(b.blockedUntil) - now)}</b> · ${clock(Date.parse(b.blockedUntil), c.timeZone, true)}${local !== c.timeZone ? `<br><span class="muted">${clock(Date.parse(b.blockedUntil), local, true)} here</span>` : ''}</td><td class="why">${esc(b.blockedReason ?? '')}<br><code>${esc(unblockCommand(c.id, b.id))}</code></td></tr>`,
        );
      const window =
        b.window === 'upstream-day'
          ? `upstream day ${luxon().DateTime.fromMillis(start, { zone: c.timeZone }).toFormat('MMM d')}, resets ${clock(end, c.timeZone)}`
          : `sliding ${ago(b.windowMs)} window`;
      body.push(
        `<section class="card${b.blockedUntil ? ' blocked' : ''}" id="bucket-${esc(c.id)}-${esc(b.id)}">`,
        `<h3>${esc(b.id)} <span class="muted">· ${window}</span>${b.blockedUntil ? ' <span class="badge bad">blocked</span>' : ''}</h3>`,
        `<div class="figs"><span>used <b>${num(b.used)}</b> of ${num(b.quota)}</span><span>reserve <b>${num(b.reserve)}</b></span>`,
        `<span>left: scheduled ${held('scheduled')}</span><span>backfill ${held('backfill')}</span><span>manual ${held('manual')}</span>`,
        `<span class="frees" data-frees-in="${b.spendableInMs[NEXT] ?? ''}">next ${NEXT}: ${freesUp(b, c.timeZone, local, now)}</span></div>`,
        b.blockedUntil ? blockInfo(c.id, b, c.timeZone, local, now) : '',
        reconcileFigures(d, c.id, b.id, c.timeZone, now),
        chart(b, points, c.timeZone, start, end, guardLine),
        '<div class="legend"><span><i style="color:var(--used)"></i>used (a point per run)</span>',
        '<span><i style="color:var(--quota);border-top-style:dashed"></i>quota</span>',
        '<span><i style="color:var(--ceiling);border-top-style:dotted"></i>reserve starts (scheduled ceiling)</span>',
        guardLine
          ? '<span><i style="color:var(--backfill);border-top-style:dashed"></i>backfill pacing line (guard)</span><span><b style="color:var(--backfill)">◆</b> backfill spent today</span></div>'
          : '<span><i style="color:var(--pace);border-top-style:dotted"></i>even pace</span></div>',
        '</section>',
      );
    }
    body.push('</div>');
  }
  if (d.freshness) {
    const f = d.freshness;
    body.push(
      `<h2>Regions <span class="muted">· trending every ${ago(f.periodMs)}, stale after ${ago(f.staleAfterMs)}</span></h2><div class="regions">`,
      ...f.regions.map(
        (r) =>
          `<div class="region" data-region="${esc(r.region)}" data-stale="${r.stale}"><b>${esc(r.region)}</b> <span class="badge ${r.stale ? 'bad' : 'ok'}">${r.stale ? 'stale' : 'fresh'}</span><br><span class="muted">${r.lastSuccessAt === null ? 'never fetched' : `${ago(r.ageMs ?? 0)} ago · ${clock(r.lastSuccessAt, local)}`}</span>${r.stale ? staleCard(r, f.staleAfterMs, d.runs, report, now, local) : ''}</div>`,
      ),
      '</div>',
    );
  }
  body.push(
    '<h2>Blocks</h2>',
    blocks.length
      ? `<div class="card"><table class="blocks stack"><thead><tr><th>bucket</th><th>until</th><th>why</th></tr></thead><tbody>${blocks.join('')}</tbody></table></div>`
      : '<p class="muted">No bucket is blocked.</p>',
  );
  // The reconciles have their line on each card and in the summary: the table keeps the jobs' runs.
  const last = d.runs.filter((r) => !r.job.startsWith(RECONCILE_JOB_PREFIX)).slice(0, LAST_RUNS);
  // What a run counted: the application's videos, or a job of one's own's items.
  const items = d.application === false ? 'items' : 'videos';
  body.push(
    '<h2>Last runs</h2>',
    last.length
      ? `<div class="card"><table class="runs stack"><thead><tr><th>ended</th><th>job</th><th>outcome</th><th class="n">pages</th><th class="n">units</th><th class="n">${items}</th><th>why</th></tr></thead><tbody>${last
          .map(
            (r, i) =>
              `<tr><td>${clock(r.finishedAt, local)}</td><td>${esc(r.job)}${r.client !== undefined ? ` <span class="muted">by ${esc(r.client)}</span>` : ''}</td><td>${outcomeBadge(r.outcome)}</td><td class="n">${num(r.pages)} <span class="unit">${plural(r.pages, 'page')}</span></td><td class="n">${num(r.units)} <span class="unit">${plural(r.units, 'unit')}</span></td><td class="n">${num(r.items)} <span class="unit">${plural(r.items, items.slice(0, -1))}</span></td><td class="why muted">${
                // A reason the run above gave too (every region stopped by the same block) is said once.
                r.reason && i > 0 && last[i - 1]!.reason === r.reason
                  ? 'same as above'
                  : tapToRead(r.reason ?? '')
              }</td></tr>`,
          )
          .join('')}</tbody></table></div>`
      : '<p class="muted">No runs recorded yet.</p>',
  );
  body.push(
    `<footer>Refreshes every ${refresh} s · <a href="/metrics">/metrics</a> · <a href="/healthz">/healthz</a></footer>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="${refresh}"><title>quota-guard status</title><style>${STYLE}</style></head>
<body><main>${body.join('\n')}</main></body></html>
`;
}
