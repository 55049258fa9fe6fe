/** What `quota-guard history` prints: the runs as a table or as JSON. */
import type { RunSummary } from '../history/index.js';
import { luxon } from '../time-libs.js';
import { formatDuration, formatNumber, table } from './format.js';

/** The terminal width the table keeps to. */
const WIDTH = 100;

/** A run for scripts: times as ISO strings besides the epoch ms. */
export function runJson(r: RunSummary): Record<string, unknown> {
  return {
    ...r,
    started: new Date(r.startedAt).toISOString(),
    finished: new Date(r.finishedAt).toISOString(),
    durationMs: r.finishedAt - r.startedAt,
  };
}

/** `11-23 14:05:09` in the operator's zone. */
function localTime(ms: number): string {
  return luxon().DateTime.fromMillis(ms).toFormat('MM-dd HH:mm:ss');
}

/** The human form: one line per run, within 100 columns (the reason is cut to fit). */
export function renderHistory(runs: RunSummary[], showCredential: boolean): string {
  if (runs.length === 0) return 'no runs recorded yet (jobs record each run when they finish)\n';
  const head = ['started', ...(showCredential ? ['credential'] : []), 'job', 'outcome', 'took'];
  const rows = [[...head, 'pages', 'units', 'videos']];
  for (const r of runs) {
    rows.push([
      localTime(r.startedAt),
      ...(showCredential ? [r.credential] : []),
      r.job,
      r.outcome,
      formatDuration(r.finishedAt - r.startedAt),
      formatNumber(r.pages),
      formatNumber(r.units),
      formatNumber(r.videos),
    ]);
  }
  const lines = table(rows).split('\n');
  const out = [runs.some((r) => r.reason) ? `${lines[0]!}  reason` : lines[0]!];
  runs.forEach((r, i) => {
    const line = lines[i + 1]!;
    const room = WIDTH - line.length - 2;
    out.push(r.reason && room > 8 ? `${line}  ${clip(r.reason, room)}` : line);
  });
  out.push(`(${runs.length} run${runs.length === 1 ? '' : 's'}, newest first; times in ${localZone()})`);
  return `${out.join('\n')}\n`;
}

export function clip(s: string, width: number): string {
  const chars = [...s];
  return chars.length <= width ? s : `${chars.slice(0, width - 1).join('')}…`;
}

export function localZone(): string {
  return luxon().DateTime.local().zoneName ?? 'local time';
}
