/**
 * `status` and `history` in a real terminal 60, 80 and 100 columns wide (a pseudo-terminal from
 * util-linux `script`, sized with `stty`): no line is wider than the terminal and the columns of
 * each table stay aligned; a narrow terminal gets a narrower layout, never a wrapped row. Without a
 * terminal, `COLUMNS` sets the width.
 */
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { createGuard } from '../../src/guard/index.js';
import { openRunHistory } from '../../src/history/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { loadYouTubeConfig as loadConfig } from '../../src/youtube/config/part.js';
import { BIN } from '../harness/child.js';
import { cliOnTerminal, hasScript } from '../harness/terminal.js';
import { busyConfig, configFile, spendThenBlock, sqliteStore } from './helpers.js';

if (!hasScript)
  console.warn('terminal-width: skipped, `script` (util-linux) is not on PATH to give the CLI a terminal');

const quiet = { info() {}, warn() {} };
let file: string;

beforeAll(async () => {
  file = configFile(busyConfig(sqliteStore(), { hourlyBackfill: false }));
  const config = loadConfig({ file, env: {} });
  const ledger = await openLedger(config.store.url);
  const history = await openRunHistory(config.store);
  try {
    const guard = createGuard({ config, ledger, logger: quiet });
    await guard.spend({
      credential: 'main',
      method: 'search.list',
      tier: 'manual',
      tag: 'manual:search.list',
    });
    await spendThenBlock(guard, 't');
    const now = Date.now();
    const run = (job: string, minutesAgo: number, reason: string | null) => ({
      credential: 'main',
      job,
      labels: job.startsWith('trending:') ? { region: job.slice('trending:'.length) } : {},
      startedAt: now - minutesAgo * 60_000,
      finishedAt: now - minutesAgo * 60_000 + 4_000,
      outcome: reason ? ('stopped' as const) : ('done' as const),
      pages: 4,
      units: 1_204,
      items: 12_345,
      reason,
      used: { units: 300 },
    });
    await history.record(run('trending:US', 30, null));
    await history.record(
      run(
        'trending:GB',
        20,
        'units blocked until 2026-11-24T08:00:00.000Z: upstream answered quotaExceeded to videos.list although the ledger allowed it',
      ),
    );
    await history.record(run('backfill', 10, 'the --max-units limit (2) is reached'));
    // A run a PHP job recorded through the decision API: shown with the token's name.
    await history.record({ ...run('trending:DE', 5, null), client: 'php-cron' });
  } finally {
    await history.close();
    await ledger.close();
  }
});

/** Run the CLI under a pseudo-terminal `cols` wide; its output's lines, control sequences removed. */
async function onTerminal(cols: number, args: string[]): Promise<{ code: number | null; lines: string[] }> {
  const { code, out } = await cliOnTerminal(args, { cols, rows: 50 }, { LOG_LEVEL: 'silent', TZ: 'UTC' });
  // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences
  const text = out.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
  return { code, lines: text.replace(/\n$/, '').split('\n') };
}

/**
 * Each table's rows line up under its header: every cell starts where its column's heading starts
 * (text) or ends where it ends (numbers). `header` picks the header lines; rows follow up to a line
 * that has no two-space gap.
 */
function expectAligned(lines: string[], header: (l: string) => boolean): number {
  let tables = 0;
  for (let i = 0; i < lines.length; i++) {
    if (!header(lines[i]!)) continue;
    tables++;
    const spans = [...lines[i]!.matchAll(/\S+(?: \S+)*/g)].map((m) => [m.index, m.index + m[0].length]);
    for (let j = i + 1; j < lines.length && /\S {2,}\S/.test(lines[j]!); j++) {
      // The bars have no heading: the cells after them are what line up.
      const cells = [...lines[j]!.matchAll(/\S+(?: \S+)*/g)]
        .filter((m) => !/^[█░]+$/.test(m[0]))
        .map((m) => [m.index, m.index + m[0].length]);
      for (const [k, [start, end]] of cells.entries()) {
        const col = spans[k];
        if (col === undefined) continue; // the history's reason: beyond the last heading
        expect(start === col[0] || end === col[1], `${lines[j]} | ${lines[i]}`).toBe(true);
      }
    }
  }
  return tables;
}

describe.skipIf(!hasScript)('status and history fit the terminal', () => {
  for (const cols of [60, 80, 100]) {
    it(`at ${cols} columns`, { timeout: 60_000 }, async () => {
      const status = await onTerminal(cols, ['status', '--config', file]);
      if (process.env['SHOW']) console.log(status.lines.join('\n'));
      expect(status.code).toBe(0);
      for (const l of status.lines) expect([...l].length, l).toBeLessThanOrEqual(cols);
      expect(status.lines.join('\n')).toMatch(/BLOCKED until/);
      const tables = expectAligned(status.lines, (l) => /^ {2}bucket /.test(l));
      // A table where it fits, else each bucket stacked on two lines; either way every figure is shown.
      if (tables === 0) expect(status.lines.join('\n')).toMatch(/\n {4}left: scheduled \S+ · backfill/);
      if (cols === 100) expect(tables).toBe(1);

      const history = await onTerminal(cols, ['history', '--config', file]);
      if (process.env['SHOW']) console.log(history.lines.join('\n'));
      expect(history.code).toBe(0);
      for (const l of history.lines) expect([...l].length, l).toBeLessThanOrEqual(cols);
      const text = history.lines.join('\n').replace(/\n +/g, ' ');
      // Each reason is there whole, not cut to a prefix every row shares.
      expect(text).toContain('although the ledger allowed it');
      expect(text).toContain('the --max-units limit (2) is reached');
      expect(text).toMatch(/trending:DE\s+(php-cron\s+done|done by php-cron)/);
      expect(expectAligned(history.lines, (l) => l.startsWith('started '))).toBe(1);
    });
  }

  it('follows COLUMNS when the output is not a terminal', { timeout: 60_000 }, async () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', BIN, 'history', '--config', file], {
      env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'silent', COLUMNS: '70' },
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(Math.max(...lines.map((l) => [...l].length))).toBeLessThanOrEqual(70);
    expect(Math.max(...lines.map((l) => [...l].length))).toBeGreaterThan(60);
  });
});
