/**
 * `quota-guard backfill` on a terminal: the progress bar is drawn and every log line the run writes
 * meanwhile is printed whole, on its own line above the bar, never in the middle of it: a human
 * line (the terminal's default) within the terminal's width, a JSON one (`LOG_FORMAT=json`) whole. The CLI runs
 * in a child process under a pseudo-terminal (util-linux `script`), so it sees a real TTY.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Simulator, startSimulator } from '../../src/youtube/simulator/index.js';
import { cli } from '../cli/helpers.js';
import { cliOnTerminal, hasScript } from '../harness/terminal.js';
import { secretKey, tmpPath } from '../job-library/helpers.js';
import { configFile } from './helpers.js';

/** The terminal's width: narrower than the JSON log lines, which must still arrive whole. */
const COLS = 80;
if (!hasScript)
  console.warn('progress-tty: skipped, `script` (util-linux) is not on PATH to give the CLI a terminal');

let sim: Simulator;
const key = secretKey();

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});

afterAll(async () => {
  await sim?.close();
});

/**
 * The lines a terminal `width` columns wide shows after receiving `out`, each line as written (a
 * line the terminal wrapped is joined again): characters overwrite at the cursor, `\r` and
 * `ESC[<n>G` move it within the line, `ESC[K`/`ESC[0K` clear to the right, `ESC[2K` the whole line,
 * `\n` starts the next line. With wrapping off (`ESC[?7l`) a character past the last column
 * overwrites the last column, as a terminal does: the rest of a long line is lost. Other sequences
 * (cursor visibility) change nothing shown.
 */
function screen(out: string, width: number): string[] {
  const lines: string[][] = [[]];
  let col = 0;
  let wrap = true;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences
  const tokens = out.match(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]|[\s\S]/gu) ?? [];
  for (const t of tokens) {
    const line = lines[lines.length - 1] as string[];
    // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences
    const csi = /^\x1b\[([0-9;?]*)([A-Za-z])$/.exec(t);
    if (t === '\n') {
      lines.push([]);
      col = 0;
    } else if (t === '\r') col = 0;
    else if (csi?.[1] === '?7') wrap = csi[2] === 'h';
    else if (csi?.[2] === 'G') col = Math.max(0, Number(csi[1] || '1') - 1);
    else if (csi?.[2] === 'K') {
      if (csi[1] === '2') line.length = 0;
      else if (csi[1] === '' || csi[1] === '0') line.length = Math.min(line.length, col);
    } else if (!t.startsWith('\x1b')) {
      // One logical line holds every row it wrapped onto: a wrapped column is col % width.
      if (!wrap && col >= width) col = Math.floor(col / width) * width + width - 1;
      while (line.length < col) line.push(' ');
      line[col++] = t;
    }
  }
  return lines.map((l) => l.join(''));
}

describe.skipIf(!hasScript)('backfill progress on a terminal', () => {
  it.each(['json', 'human'] as const)('prints each %s log line whole above the bar', {
    timeout: 90_000,
  }, async (format) => {
    const file = configFile({
      store: `sqlite:${tmpPath('ledger.db')}`,
      cache: { path: tmpPath('cache.db') },
      upstream: { baseUrl: sim.url },
      credentials: [{ id: 'default', apiKeyEnv: 'QG_TTY_TEST_KEY' }],
      regions: ['US', 'GB'],
      // The backfill refreshes what fetch has just cached, whatever the time of day.
      backfill: { minAge: 0, pace: 'none', holdScheduled: false },
    });
    vi.stubEnv('QG_TTY_TEST_KEY', key);
    vi.stubEnv('LOG_LEVEL', 'silent');
    try {
      expect((await cli('fetch', '--config', file)).code).toBe(0);
    } finally {
      vi.unstubAllEnvs();
    }

    const { code, out } = await cliOnTerminal(
      ['backfill', '--config', file],
      { cols: COLS, rows: 40 },
      {
        QG_TTY_TEST_KEY: key,
        LOG_LEVEL: 'info',
        LOG_FORMAT: format,
      },
    );
    expect(code).toBe(0);
    const lines = screen(out, COLS).filter((l) => l.trim() !== '');
    if (format === 'json') {
      const logs = lines.filter((l) => l.includes('"level"'));
      expect(logs.filter((l) => l.includes('backfill batch written')).length).toBeGreaterThan(1);
      // Longer than the terminal is wide, and whole.
      expect(Math.max(...logs.map((l) => l.length))).toBeGreaterThan(COLS);
      for (const line of logs) {
        expect(line.startsWith('{'), line).toBe(true);
        expect(() => JSON.parse(line), line).not.toThrow();
      }
    } else {
      expect(
        lines.some((l) => l.includes('"level"')),
        lines.join('\n'),
      ).toBe(false);
      const logs = lines.filter((l) => /^\d\d:\d\d:\d\d /.test(l));
      expect(logs.filter((l) => /batch written/.test(l)).length, lines.join('\n')).toBeGreaterThan(1);
      for (const line of logs) expect([...line].length, line).toBeLessThanOrEqual(COLS);
    }
    const bars = lines.filter((l) => l.startsWith('backfill ['));
    expect(bars.length).toBeGreaterThan(0);
    for (const bar of bars) expect(bar).toMatch(/^backfill \[[█░]+\] \d+\/\d+ videos \| \d+ units \| \d+/);
    // The last bar drawn shows the whole pass, and the result line follows it.
    expect(bars.at(-1)).toMatch(/^backfill \[█+\] (\d+)\/\1 videos/);
    expect(lines.at(-1)).toMatch(/^backfill {2}done {2}\d+ calls, \d+ videos, \d+ units in /);
  });
});
