/**
 * The summary's line for what arrived late: per bucket, the units of its window written into the
 * ledger after they were spent (a journal replayed once the store answered, the guard's own or a
 * client's), how many entries, and how long ago the oldest was spent. A `notices` line of the
 * status page and of `quota-guard status` (src/metrics/summary.ts).
 */
import type { StatusReport } from '../guard/status.js';
import type { SummaryLine } from './summary.js';

const NUMBER = new Intl.NumberFormat('en-US');

/** `3h 05m`, `12m`, `40s`: how long ago, coarse enough for a summary line. */
function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  return `${h}h ${String(m % 60).padStart(2, '0')}m`;
}

/** One line per bucket whose window holds entries recorded late (none when none does). */
export function recordedLateNotices(report: StatusReport): SummaryLine[] {
  const nowMs = Date.parse(report.at);
  const lines: SummaryLine[] = [];
  for (const c of report.credentials)
    for (const b of c.buckets) {
      const late = b.recordedLate;
      if (!late || late.entries === 0) continue;
      const oldest =
        late.oldestAt !== null ? `, oldest spent ${ago(nowMs - Date.parse(late.oldestAt))} ago` : '';
      lines.push({
        severity: 'warn',
        text: `${c.id}/${b.id} recorded late: ${NUMBER.format(late.units)} unit${late.units === 1 ? '' : 's'} from ${NUMBER.format(late.entries)} entr${late.entries === 1 ? 'y' : 'ies'}${oldest}`,
      });
    }
  return lines;
}
