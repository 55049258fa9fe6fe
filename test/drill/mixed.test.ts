/**
 * `quota-guard drill --mixed` on a 72 s day on Redis (the private server): two `serve --decisions`
 * instances, one killed at mid-day and started again, one restarted gracefully at 0.75, and a PHP
 * and a Python cron job (real php and python3) spending through both beside the Node jobs.
 *
 * Asserted: exactness and completeness — the simulator charged what the ledger recorded, every
 * spender counted, every run of the cron jobs in the history, their journals empty. Utilisation and
 * the trending runs depend on the machine's load on a short day: printed, not asserted.
 */
import { describe, expect, inject, it } from 'vitest';
import type { DrillReport } from '../../src/drill/index.js';
import { cli, expectOneLine, quietCli } from '../cli/helpers.js';

const QUOTA = 1_000;
const DAY_SECONDS = 72;

quietCli();

describe('drill --mixed', () => {
  it('on Redis: charged = recorded with the PHP and Python jobs counted, every one of their runs in the history', async () => {
    const r = await cli(
      'drill',
      '--mixed',
      '--json',
      '--day-seconds',
      String(DAY_SECONDS),
      '--quota',
      String(QUOTA),
      '--store',
      inject('redisUrl'),
      '--key-prefix',
      `${inject('keyPrefix')}drill-mixed:`,
    );
    const report = JSON.parse(r.stdout) as DrillReport;
    const m = report.mixed!;
    const checks = Object.fromEntries(report.checks.map((c) => [c.name, c]));
    console.info(
      `drill --mixed on Redis: utilisation ${(report.utilisation * 100).toFixed(2)} %, trending ${report.trendingRunsDone}/${report.trendingRunsScheduled}, load ${report.loadAverage.start} → ${report.loadAverage.end}; ${JSON.stringify(m.clients.map(({ said: _, ...c }) => c))}`,
    );
    expect(report.store).toBe('redis');
    // Exact: every spender's units (the Node jobs', the PHP and Python jobs' through both
    // instances, late records replayed from their journals) charged once and recorded once.
    expect(checks['chargedEqualsRecorded']!.ok, checks['chargedEqualsRecorded']!.detail).toBe(true);
    expect(report.chargedUnits).toBe(report.recordedUnits);
    expect(m.clientPages).toBeGreaterThan(0);
    expect(report.chargedUnits).toBeGreaterThanOrEqual(
      report.trendingUnits + report.backfillUnits + report.manualUnits + m.clientPages,
    );
    // Complete: every run of every job in the history, nothing left in a journal.
    for (const name of ['clientRunsInHistory', 'clientJournalsReplayed'])
      expect(checks[name]!.ok, checks[name]!.detail).toBe(true);
    expect(m.clients.map((c) => c.lang)).toEqual(['php', 'python']);
    for (const c of m.clients) {
      expect(c.exitCode, JSON.stringify(c)).toBe(0);
      expect(c.runs).toBeGreaterThan(10);
      expect(c.runsInHistory).toBe(c.runs);
      expect(c.journalLeft).toBe(0);
      expect(c.replayed).toBeGreaterThanOrEqual(0);
      expect(c.urls).toHaveLength(2);
    }
    // Both URLs, in either order; the crash and the restart happened, each instance came back.
    expect(m.clients[0]!.urls).toEqual([...m.clients[1]!.urls].reverse());
    const [a, b] = m.instances;
    expect(a!.events.map((e) => e.what)).toEqual(
      expect.arrayContaining(['started', 'SIGKILL', 'exited', 'started']),
    );
    expect(a!.events.filter((e) => e.what === 'started')).toHaveLength(2);
    expect(b!.events.filter((e) => e.what === 'SIGTERM').length).toBeGreaterThanOrEqual(1);
    expect(b!.events.filter((e) => e.what === 'started')).toHaveLength(2);
    // The simulator's address and every spender's key are in the report.
    expect(m.simulator.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(Object.keys(m.simulator.keys).sort()).toEqual(['node', 'php', 'python']);
  }, 240_000);

  it('without php and python3: one line naming what to install, exit 78, nothing started', async () => {
    const path = process.env['PATH'];
    process.env['PATH'] = '/nonexistent';
    try {
      const r = await cli('drill', '--mixed', '--day-seconds', '24', '--quota', '100');
      expect(r.code).toBe(78);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(2);
      expectOneLine(lines[0]!, /php was not found \(install php-cli and php-curl/);
      expectOneLine(lines[1]!, /python3 was not found \(install python3/);
    } finally {
      process.env['PATH'] = path;
    }
  });
});
