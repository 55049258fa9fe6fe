/** What `quota-guard history` prints: the runs as a table or as JSON. */
import { type RunSummary, withCompatibleFields } from '../../history/index.js';
import { terminalText } from '../../terminal-text.js';
import { luxon } from '../../time-libs.js';

export { outputWidth } from './format.js';

import { count, DEFAULT_WIDTH, formatDuration, formatNumber, table, widest, wrap } from './format.js';

/** A run for scripts: times as ISO strings besides the epoch ms. */
export function runJson(r: RunSummary): Record<string, unknown> {
  return {
    ...withCompatibleFields(r),
    started: new Date(r.startedAt).toISOString(),
    finished: new Date(r.finishedAt).toISOString(),
    durationMs: r.finishedAt - r.startedAt,
  };
}

/** `11-23 14:05:09` in the operator's zone. */
export function localTime(ms: number): string {
  return luxon().DateTime.fromMillis(ms).toFormat('MM-dd HH:mm:ss');
}

type Column = [string, (r: RunSummary) => string];

/**
 * The human form, within `width` columns: one row per run, its reason beside it when the reason fits
 * there, else on the lines under it, whole. The decision API's client that recorded a run has a
 * column when any run listed has one (`-` for this host's own jobs). A narrow terminal loses the
 * pages, the duration and the videos columns, in that order; where even that is too wide, each run
 * is stacked over two lines. A reason the run above gave too is `same as above`. `items` names what
 * the runs counted: the YouTube application's videos, or a job of one's own's items.
 */
export function renderHistory(
  runs: RunSummary[],
  showCredential: boolean,
  width = DEFAULT_WIDTH,
  items: 'videos' | 'items' = 'videos',
): string {
  if (runs.length === 0) return 'no runs recorded yet (jobs record each run when they finish)\n';
  // Names and reasons a client sent are printed as text, never as terminal controls.
  const job = (r: RunSummary) => terminalText(r.job);
  // A reason the run above gave too (every region stopped by one block) is said once.
  const reason = (r: RunSummary) => {
    const i = runs.indexOf(r);
    return i > 0 && r.reason && runs[i - 1]!.reason === r.reason
      ? 'same as above'
      : terminalText(r.reason ?? '');
  };
  const columns: Column[] = [
    ['started', (r) => localTime(r.startedAt)],
    ...(showCredential ? [['credential', (r: RunSummary) => r.credential] as Column] : []),
    ['job', job],
    ...(runs.some((r) => r.client !== undefined)
      ? [['client', (r: RunSummary) => r.client ?? '-'] as Column]
      : []),
    ['outcome', (r) => r.outcome],
    ['took', (r) => formatDuration(r.finishedAt - r.startedAt)],
    ['pages', (r) => formatNumber(r.pages)],
    ['units', (r) => formatNumber(r.units)],
    [items, (r) => formatNumber(r.items)],
  ];
  const footer = `(${runs.length} run${runs.length === 1 ? '' : 's'}, newest first; times in ${localZone()})`;
  const reasons = runs.some((r) => r.reason);
  for (const drop of [[], ['pages'], ['pages', 'took'], ['pages', 'took', items]]) {
    const shown = columns.filter(([name]) => !drop.includes(name));
    const lines = table([
      shown.map(([name]) => name),
      ...runs.map((r) => shown.map(([, cell]) => cell(r))),
    ]).split('\n');
    if (widest(lines.join('\n')) > width) continue;
    // Lines are padded with spaces, so chars = columns (no wide characters in these cells).
    const tableWidth = widest(lines.join('\n'));
    const room = width - tableWidth - 2;
    const out = [reasons && room >= 'reason'.length ? `${lines[0]!.padEnd(tableWidth)}  reason` : lines[0]!];
    runs.forEach((r, i) => {
      const line = lines[i + 1]!;
      if (!r.reason) out.push(line);
      else if ([...reason(r)].length <= room) out.push(`${line.padEnd(tableWidth)}  ${reason(r)}`);
      else out.push(line, wrap(reason(r), width, '    ', '  '));
    });
    out.push(wrap(footer, width));
    return `${out.join('\n')}\n`;
  }
  // Stacked: when and what on one line, what it did on the next, the reason under them.
  const out: string[] = [];
  for (const r of runs) {
    out.push(
      wrap(
        `${localTime(r.startedAt)}${showCredential ? ` ${r.credential}` : ''} ${job(r)} ${r.outcome}${r.client !== undefined ? ` by ${r.client}` : ''}`,
        width,
      ),
      wrap(
        `took ${formatDuration(r.finishedAt - r.startedAt)} · ${count(r.pages, 'page')} · ${count(r.units, 'unit')} · ${count(r.items, items.slice(0, -1))}`,
        width,
        '  ',
      ),
    );
    if (r.reason) out.push(wrap(reason(r), width, '  ', '  '));
  }
  out.push(wrap(footer, width));
  return `${out.join('\n')}\n`;
}

export function localZone(): string {
  return luxon().DateTime.local().zoneName ?? 'local time';
}
