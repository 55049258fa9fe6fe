/**
 * The day's spend curve of a drill as a small standalone SVG (no library: a few polylines and
 * labels): the units the upstream counted on the backfill's bucket (someone else's spend included),
 * ours, the backfill's, and its pacing line, with the moment someone else spent, the moment the
 * upstream ran dry and the moment the line is lifted marked, and where each backfill run ended and
 * why (its line, its ceiling, a budget, the upstream, the day's end).
 */
import type { BackfillEnd, DrillReport } from './drill.js';

const W = 720;
const H = 360;
const PAD = { left: 56, right: 16, top: 40, bottom: 44 };

/** Each way a backfill run ends: its mark's letter and colour, and the legend's words. */
const ENDS: Record<BackfillEnd, { letter: string; color: string; label: string }> = {
  line: { letter: 'L', color: '#229954', label: 'its line' },
  headroom: { letter: 'H', color: '#ca6f1e', label: 'its ceiling' },
  budget: { letter: 'B', color: '#ca6f1e', label: 'a budget' },
  upstream: { letter: 'U', color: '#7d3c98', label: 'upstream dry' },
  'day-end': { letter: 'E', color: '#555', label: "day's end" },
  done: { letter: 'D', color: '#555', label: 'nothing due' },
  other: { letter: 'O', color: '#b03a2e', label: 'other' },
};

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (n: number) => new Intl.NumberFormat('en-US').format(n);

/** The SVG text of a drill report's curve. */
export function drillSvg(r: DrillReport): string {
  const bucket = r.buckets[r.backfillBucket]!;
  const top = bucket.quota;
  const x = (f: number) => PAD.left + Math.max(0, Math.min(1, f)) * (W - PAD.left - PAD.right);
  const y = (u: number) => H - PAD.bottom - (Math.max(0, u) / top) * (H - PAD.top - PAD.bottom);
  const line = (pick: (p: DrillReport['curve'][number]) => number | null) =>
    r.curve
      .filter((p) => pick(p) !== null)
      .map((p) => `${x(p.f).toFixed(1)},${y(pick(p)!).toFixed(1)}`)
      .join(' ');
  const series: Array<{ label: string; color: string; points: string; dash?: string }> = [
    { label: 'upstream count (someone else included)', color: '#b03a2e', points: line((p) => p.used) },
    { label: 'ours', color: '#1f618d', points: line((p) => p.ours) },
    { label: 'the backfill', color: '#229954', points: line((p) => p.backfill) },
    { label: 'its pacing line', color: '#229954', points: line((p) => p.line), dash: '5 4' },
  ];
  const heading = `quota-guard drill: ${r.profile}, ${r.store}, ${r.backfillBucket} (quota ${fmt(bucket.quota)}), a ${r.daySeconds} s day`;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11" role="img">`,
    `<title>${esc(`${heading}: the day's spend curve`)}</title>`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${PAD.left}" y="16" font-size="13">${esc(heading)}</text>`,
    `<text x="${PAD.left}" y="30" fill="#555">${esc(
      `trending runs completed ${(r.trendingRunsCompleted * 100).toFixed(1)} %, utilisation ${(r.utilisation * 100).toFixed(2)} % of spendable, ran dry at ${r.dryAtDayFraction === null ? 'no point' : `${(r.dryAtDayFraction * 100).toFixed(1)} % of the day`}`,
    )}</text>`,
  ];
  // Axes and grid: quarters of the quota, every 3 hours of the day.
  for (let q = 0; q <= 4; q++) {
    const u = (top * q) / 4;
    out.push(
      `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(u)}" y2="${y(u)}" stroke="#ddd"/>`,
      `<text x="${PAD.left - 6}" y="${y(u) + 4}" text-anchor="end">${fmt(u)}</text>`,
    );
  }
  for (let h = 0; h <= 24; h += 3) {
    out.push(
      `<line x1="${x(h / 24)}" x2="${x(h / 24)}" y1="${PAD.top}" y2="${H - PAD.bottom}" stroke="#eee"/>`,
      `<text x="${x(h / 24)}" y="${H - PAD.bottom + 14}" text-anchor="middle">${String(h).padStart(2, '0')}:00</text>`,
    );
  }
  out.push(
    `<text x="${(PAD.left + W - PAD.right) / 2}" y="${H - 8}" text-anchor="middle" fill="#555">hour of the (scaled) upstream day</text>`,
  );
  const mark = (f: number | null, label: string, color: string, dy: number) => {
    if (f === null) return;
    out.push(
      `<line x1="${x(f)}" x2="${x(f)}" y1="${PAD.top}" y2="${H - PAD.bottom}" stroke="${color}" stroke-dasharray="2 3"/>`,
      `<text x="${x(f) - 4}" y="${PAD.top + dy}" text-anchor="end" fill="${color}">${esc(label)}</text>`,
    );
  };
  mark(r.behindAtDayFraction, `someone else spends ${fmt(bucket.behind)}`, '#b03a2e', 12);
  mark(r.dryAtDayFraction, 'upstream dry', '#7d3c98', 26);
  mark(r.lineLiftedAtDayFraction, 'line lifted', '#229954', 40);
  for (const s of series) {
    if (!s.points) continue;
    out.push(
      `<polyline fill="none" stroke="${s.color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''} points="${s.points}"/>`,
    );
  }
  // Where each backfill run ended, on the backfill's curve, lettered by why.
  const ended = new Set<BackfillEnd>();
  for (const run of r.backfillRuns) {
    if (run.line === undefined) continue;
    const e = ENDS[run.end];
    ended.add(run.end);
    const cx = x(run.to).toFixed(1);
    const cy = y(run.line.spentToday);
    out.push(
      `<circle cx="${cx}" cy="${cy.toFixed(1)}" r="3" fill="${e.color}"><title>${esc(`backfill run ${(run.from * 100).toFixed(1)}–${(run.to * 100).toFixed(1)} % of the day, ${fmt(run.units)} units, ended by ${e.label}`)}</title></circle>`,
      `<text x="${cx}" y="${(cy + 14).toFixed(1)}" text-anchor="middle" fill="${e.color}">${e.letter}</text>`,
    );
  }
  // What the letters say, top left, below the marks' labels (nothing is drawn that high that early).
  if (ended.size > 0)
    out.push(
      `<text x="${PAD.left + 8}" y="${PAD.top + 54}" fill="#555">${esc(
        `a backfill run ended by: ${[...ended].map((k) => `${ENDS[k].letter} ${ENDS[k].label}`).join(', ')}`,
      )}</text>`,
    );
  // Legend, bottom right above the axis.
  const lx = W - PAD.right - 250;
  series.forEach((s, i) => {
    const ly = H - PAD.bottom - 12 - (series.length - 1 - i) * 14;
    out.push(
      `<line x1="${lx}" x2="${lx + 20}" y1="${ly - 4}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`,
      `<text x="${lx + 26}" y="${ly}">${esc(s.label)}</text>`,
    );
  });

  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
