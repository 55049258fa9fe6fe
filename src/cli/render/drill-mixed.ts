/** What `quota-guard drill --mixed` adds for people: the `serve` instances and each cron job's figures. */
import type { DrillReport } from '../../drill/drill.js';
import { formatNumber, table } from './format.js';

/** Lines for the outside spenders (none without --mixed). */
export function mixedLines(r: DrillReport): string[] {
  const m = r.mixed;
  if (!m) return [];
  const pct = (f: number) => `${(f * 100).toFixed(1)}%`;
  const out = [
    `  simulator ${m.simulator.url} (project ${m.simulator.project}), keys: ${Object.entries(m.simulator.keys)
      .map(([who, key]) => `${who} ${key}`)
      .join(', ')}`,
  ];
  for (const i of m.instances)
    out.push(`  serve ${i.name} at ${i.url}: ${i.events.map((e) => `${e.what} at ${pct(e.at)}`).join(', ')}`);
  const rows = [
    [
      '  cron job',
      'runs',
      'in history',
      'spends',
      'pages',
      'fail-open',
      'unknown',
      'journalled',
      'replayed',
      'left',
    ],
  ];
  for (const c of m.clients)
    rows.push([
      `  ${c.lang} (${c.urls.length} URLs)`,
      formatNumber(c.runs),
      formatNumber(c.runsInHistory),
      formatNumber(c.spends),
      formatNumber(c.pages),
      formatNumber(c.failOpen),
      formatNumber(c.unknown),
      formatNumber(c.journalled),
      formatNumber(c.replayed),
      formatNumber(c.journalLeft),
    ]);
  out.push(table(rows));
  for (const c of m.clients) {
    const reasons = Object.entries(c.reasons)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ');
    out.push(
      `  ${c.lang}: spends ${reasons || 'none'}; ${c.quotaExceeded} quotaExceeded, ${c.upstreamErrors} upstream errors; ${formatNumber(c.historyUnits)} units in its recorded runs`,
    );
    if (c.said) for (const l of c.said) out.push(`    ${l}`);
  }
  out.push(
    `  cron jobs' units: ${formatNumber(m.clientUnits)} recorded in their runs, ${formatNumber(m.clientPages)} pages served`,
  );
  return out;
}
