/**
 * What `quota-guard status` prints for people: per credential and bucket, what is used, what each
 * tier can still spend (narrower budgets and the pace folded in), the reserve, when units free up,
 * blocks and why; every configured region's last successful fetch; spend by region, by method and by site (the job, or the decision API client's token name).
 * Within 100 columns, times in the credential's zone and the operator's.
 */

import type { Tier } from '../../config/types.js';
import type { BucketStatus, StatusReport } from '../../guard/status.js';
import { reconciledBucket, reconcileLine } from '../../metrics/reconcile-view.js';
import { type SummaryLine, summaryLines, unblockCommand } from '../../metrics/summary.js';
import type { LastReconcile } from '../../reconcile/runs.js';
import { terminalText } from '../../terminal-text.js';
import { luxon } from '../../time-libs.js';
import type { RegionFreshness } from '../../youtube/freshness.js';
import { bar, breakdown, count, formatDuration, formatNumber, table, widest, wrap } from './format.js';

/** What `status` prints: the ledger's report and, when the history was readable, region freshness. */
export interface StatusView extends StatusReport {
  /** The ledger read: the absolute file, or the store URL with its password redacted. */
  ledger?: string;
  /** The cache the jobs write (absolute file). */
  cache?: string;
  freshness?: {
    periodMs: number;
    staleAfterMs: number;
    regions: RegionFreshness[];
  };
  /** What needs an operator now, worst first (the page's summary): see `statusSummary`. */
  summary?: SummaryLine[];
  /**
   * Lines for the summary from other parts of the program (entries recorded late, drift from the
   * upstream's count), placed among its own by severity.
   */
  notices?: SummaryLine[];
  /** Per project a credential names: its last reconcile and the figures of its last successful one. */
  reconcile?: LastReconcile[];
}

/** The summary of a status view, times in the credential's zone and the operator's (`when`). */
export function statusSummary(view: StatusView, localZone?: string): SummaryLine[] {
  const local = localZone ?? luxon().DateTime.local().zoneName ?? 'UTC';
  const nowMs = Date.parse(view.at);
  return summaryLines(
    {
      report: view,
      ...(view.freshness ? { freshness: view.freshness } : {}),
      ...(view.notices ? { notices: view.notices } : {}),
    },
    { until: (ms, zone) => when(ms, zone, local, nowMs), at: (ms) => clock(ms, local, nowMs) },
  );
}

export const STATUS_WIDTH = 100;
const TIERS: readonly Tier[] = ['scheduled', 'backfill', 'manual'];
/** The amount the `next 100` column is about. */
const NEXT = '100';

export interface RenderStatusOptions {
  /** Bars only on a terminal. */
  tty?: boolean;
  /** The operator's zone (default: this host's). */
  localZone?: string;
  /** Columns to keep within (default 100; the command passes the terminal's, see `outputWidth`). */
  width?: number;
}

/** `11:08:12 PST`, and the date too when it is not `ref`'s day in that zone. */
export function clock(ms: number, zone: string, refMs: number): string {
  const { DateTime } = luxon();
  const t = DateTime.fromMillis(ms, { zone });
  const sameDay = t.hasSame(DateTime.fromMillis(refMs, { zone }), 'day');
  return t.toFormat(sameDay ? 'HH:mm:ss ZZZZ' : 'yyyy-MM-dd HH:mm ZZZZ');
}

/** A moment in the credential's zone, then in the operator's when that differs, and how far off. */
export function when(ms: number, zone: string, local: string, nowMs: number): string {
  const there = clock(ms, zone, nowMs);
  const here = clock(ms, local, nowMs);
  const rel = ms >= nowMs ? `in ${formatDuration(ms - nowMs)}` : `${formatDuration(nowMs - ms)} ago`;
  return `${there}${here !== there ? ` (${here} here)` : ''}, ${rel}`;
}

function leftCell(b: BucketStatus, tier: Tier): string {
  const n = formatNumber(b.spendable[tier]);
  return b.spendableLimitedBy[tier] !== null ? `${n}*` : n;
}

/** When the scheduled tier can spend NEXT units: now, in a while (blocks included), or `-` (never: above its ceiling). */
function nextFree(b: BucketStatus): string {
  const ms = b.spendableInMs[NEXT];
  if (ms === null || ms === undefined) return '-';
  return ms === 0 ? 'now' : formatDuration(ms);
}

/** Which window the bucket counts and when its units free up, in words. */
function windowNote(b: BucketStatus, zone: string, local: string, nowMs: number): string {
  if (b.window === 'upstream-day') {
    const at = b.resetsAt ? when(Date.parse(b.resetsAt), zone, local, nowMs) : '?';
    return `one log per upstream day; all of it frees at the upstream midnight, ${at}`;
  }
  const window = `${formatDuration(b.windowMs)} sliding window`;
  if (b.used === 0) return `${window}, nothing spent in it`;
  // Only amounts below what is spent, then all of it: with 4 units used, "the next 100 free up"
  // would be a promise the window cannot keep.
  const entries = Object.entries(b.freesUpInMs);
  const largest = entries.at(-1)?.[1] ?? null;
  const t = (ms: number | null | undefined) =>
    ms === null || ms === undefined ? '(unknown)' : `in ${formatDuration(ms)}`;
  const all = `${b.used === 1 ? 'the 1 unit spent frees' : `all ${formatNumber(b.used)} spent free`} up ${t(largest)}`;
  const amounts = entries.filter(([n]) => Number(n) < b.used);
  if (amounts.length === 0) return `${window}: ${all}`;
  // Amounts that free at the same time are said once: "the next 1 and 50 units free in 3h 2m".
  const groups = new Map<string, string[]>();
  for (const [n, ms] of amounts) groups.set(t(ms), [...(groups.get(t(ms)) ?? []), n]);
  const parts = [...groups].map(([when, ns], i) => {
    const list = ns.length > 1 ? `${ns.slice(0, -1).join(', ')} and ${ns[ns.length - 1]}` : ns[0];
    const noun = ns.length === 1 && ns[0] === '1' ? 'unit frees' : 'units free';
    return `${list}${i === 0 ? ` ${noun} up` : ''} ${when}`;
  });
  const tail = amounts.length < entries.length ? `; ${all}` : '';
  return `${window}: as the oldest spends age out, the next ${parts.join(', ')}${tail}`;
}

function bucketName(id: string): string {
  return [...id].length <= 20 ? id : `${[...id].slice(0, 19).join('')}…`;
}

/**
 * The buckets' table, in the widest layout that fits `width`: with the bars (on a terminal), without
 * them, or stacked, two lines per bucket, when even that is too wide; a row never wraps.
 */
function bucketTable(buckets: BucketStatus[], tty: boolean, width: number): string {
  const head = ['  bucket', 'used', 'quota', 'reserve', 'scheduled', 'backfill', 'manual', `next ${NEXT}`];
  const cells = (b: BucketStatus) => [
    formatNumber(b.used),
    formatNumber(b.quota),
    formatNumber(b.reserve),
    ...TIERS.map((t) => leftCell(b, t)),
    nextFree(b),
  ];
  for (const bars of tty ? [true, false] : [false]) {
    const rows = [
      bars ? [head[0]!, '', ...head.slice(1)] : head,
      ...buckets.map((b) => [
        `  ${bucketName(b.id)}`,
        // Blocked: the upstream says the quota is used up, whatever the ledger counted.
        ...(bars ? [bar(b.blockedUntil ? 1 : b.used / b.quota, 10)] : []),
        ...cells(b),
      ]),
    ];
    const text = table(rows);
    if (widest(text) <= width) return text;
  }
  // Stacked: what is used on the bucket's line, what each tier can spend on the next.
  return buckets
    .map((b) => {
      const [used, quota, reserve, s, bf, m, next] = cells(b);
      return [
        wrap(
          `${b.id}: used ${used} of ${quota} · reserve ${reserve} · next ${NEXT} ${next}`,
          width,
          '  ',
          '    ',
        ),
        wrap(`left: scheduled ${s} · backfill ${bf} · manual ${m}`, width, '    ', '  '),
      ].join('\n');
    })
    .join('\n');
}

/** The human form of a status report, within `options.width` columns (100 by default). */
export function renderStatus(view: StatusView, options: RenderStatusOptions = {}): string {
  const tty = options.tty ?? false;
  const local = options.localZone ?? luxon().DateTime.local().zoneName ?? 'UTC';
  const nowMs = Date.parse(view.at);
  const W = options.width ?? STATUS_WIDTH;
  const out: string[] = [
    wrap(
      `quota-guard status · ${view.store} ledger · ${clock(nowMs, local, nowMs)}${local !== 'UTC' ? ` (${clock(nowMs, 'UTC', nowMs)})` : ''}`,
      W,
    ),
  ];
  if (view.ledger !== undefined)
    out.push(wrap(`ledger ${view.ledger}${view.cache !== undefined ? ` · cache ${view.cache}` : ''}`, W));
  // What needs doing, first: the worst thing now, then the rest, each with its command.
  out.push('');
  (view.summary ?? statusSummary(view, local)).forEach((l, i) => {
    out.push(wrap(`${i === 0 ? 'now' : 'also'}: ${terminalText(l.text)}`, W, '', '  '));
    if (l.command) out.push(wrap(`run: ${l.command}`, W, '  ', '  '));
  });
  let marked = false;
  for (const c of view.credentials) {
    out.push('');
    out.push(
      wrap(
        `credential ${c.id} (${c.profile}) · its day runs in ${c.timeZone}, now ${clock(nowMs, c.timeZone, nowMs)}`,
        W,
      ),
    );
    out.push(bucketTable(c.buckets, tty, W));
    for (const b of c.buckets) if (TIERS.some((t) => b.spendableLimitedBy[t] !== null)) marked = true;
    for (const b of c.buckets) {
      const notes: string[] = [];
      if (b.blockedUntil) {
        notes.push(
          `BLOCKED until ${when(Date.parse(b.blockedUntil), c.timeZone, local, nowMs)}${b.blockedReason ? `: ${terminalText(b.blockedReason)}` : ''}`,
          `once the upstream has the quota back: ${unblockCommand(c.id, b.id)}`,
        );
      }
      for (const x of [...(b.pace ? [b.pace] : []), ...b.budgets]) {
        const held = TIERS.filter((t) => b.spendableLimitedBy[t] === x.id);
        const scope = x.methods ? ` (${x.methods.join(', ')} only)` : '';
        notes.push(
          `${x.id === b.pace?.id ? 'pace' : `budget ${x.id}`}${scope}: ${formatNumber(x.used)} of ${formatNumber(x.limit)} per ${formatDuration(x.windowMs)}, ${formatNumber(x.remaining)} left${held.length ? ` (* so ${held.length === TIERS.length ? 'every tier' : held.join(' and ')} can spend ${formatNumber(x.remaining)})` : ''}`,
        );
      }
      const bf = b.backfill;
      if (bf.scheduledNeed > 0 || bf.spentToday > 0) {
        const held =
          bf.scheduledNeed > 0
            ? ` (${formatNumber(bf.scheduledNeed)} held back for ${count(bf.scheduledRunsLeft, 'scheduled run')} left today)`
            : '';
        const paced =
          bf.allowedByNow !== null ? `, ${formatNumber(bf.allowedByNow)} allowed by now on its line` : '';
        notes.push(
          `backfill: up to ${formatNumber(bf.ceiling)} in the bucket${held}; pace ${bf.pace}: ${formatNumber(bf.spentToday)} spent today${paced}`,
        );
      }
      if (b.used > 0) {
        // Only tags that name a region (the application's jobs) make this line say anything.
        if (Object.keys(b.byRegion).some((r) => r !== '(none)'))
          notes.push(`by region: ${breakdown(b.byRegion)}`);
        notes.push(`by method: ${breakdown(b.byMethod)}`);
        notes.push(`by site: ${breakdown(b.bySite)}`);
      }
      const reconciled = reconciledBucket(view.reconcile, c.id, b.id);
      if (reconciled) notes.push(reconcileLine(reconciled, nowMs, (ms) => clock(ms, c.timeZone, nowMs)));
      if (b.used === 0 && notes.length === 0) continue;
      out.push(wrap(`${b.id}: ${windowNote(b, c.timeZone, local, nowMs)}`, W, '  ', '    '));
      for (const n of notes) out.push(wrap(n, W, '    ', '  '));
    }
  }
  out.push('');
  out.push(
    wrap(
      `scheduled / backfill / manual: units each tier can still spend in the window (its ceiling: quota − reserve; that less the backfill headroom; the whole quota)${marked ? ', * held lower by a narrower budget or the pace' : ''}. next ${NEXT}: how long until the scheduled tier can spend ${NEXT} units, blocks included (- more than its ceiling).`,
      W,
    ),
  );
  if (view.freshness) out.push('', ...renderFreshness(view.freshness, W));
  return `${out.join('\n')}\n`;
}

function renderFreshness(f: NonNullable<StatusView['freshness']>, width: number): string[] {
  const lines = wrap(
    `regions: last successful fetch (trending every ${formatDuration(f.periodMs)}; stale after ${formatDuration(f.staleAfterMs)})`,
    width,
  ).split('\n');
  let line = ' ';
  for (const r of f.regions) {
    const cell = `${r.region} ${r.ageMs === null ? 'never' : `${formatDuration(r.ageMs)} ago`}${r.stale ? ' STALE' : ''}`;
    if (line.length + 3 + cell.length > width && line.trim()) {
      lines.push(line);
      line = ' ';
    }
    line += `${line.trim() ? ' ·' : ''} ${cell}`;
  }
  if (line.trim()) lines.push(line);
  return lines;
}
