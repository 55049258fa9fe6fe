/**
 * Logs an operator can act on: on a terminal the CLI writes short human lines (the time, the level
 * when not info, the message, the fields it does not say), JSON everywhere else and with `--json`;
 * `LOG_FORMAT` chooses. A fatal error in a stderr that carries JSON lines is one more JSON line, and
 * `serve` says when it stops.
 */
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { chooseLogFormat } from '../../src/cli/log-level.js';
import { humanLogLine } from '../../src/cli/log-line.js';
import { ConfigError } from '../../src/errors.js';
import { runChild, startChild } from '../e2e/helpers.js';
import { cliOnTerminal, hasScript } from '../harness/terminal.js';
import { cli, configFile, sqliteStore } from './helpers.js';

const at = new Date(2026, 10, 27, 14, 5, 9).getTime();
const json = (o: Record<string, unknown>) =>
  JSON.stringify({ level: 30, time: at, pid: 1, hostname: 'h', name: 'quota-guard', ...o });

describe('a log line for people', () => {
  it('is the time, the level when not info, the message and the fields it does not say', () => {
    expect(
      humanLogLine(
        json({ job: 'trending:US', region: 'US', page: 2, units: 0, msg: 'trending page written' }),
        80,
      ),
    ).toBe('14:05:09 trending:US trending page written · page=2\n');
    expect(
      humanLogLine(
        json({
          level: 40,
          credential: 'default',
          bucket: 'units',
          lifted: true,
          msg: 'bucket default/units unblocked',
        }),
        80,
      ),
    ).toBe('14:05:09 WARN bucket default/units unblocked · lifted=true\n');
  });

  it('an info line is cut at the width; a warning is wrapped whole, at words', () => {
    const long = 'a page of many words '.repeat(10);
    const info = humanLogLine(json({ msg: long }), 60);
    expect(info.split('\n')).toHaveLength(2);
    expect([...info.trimEnd()]).toHaveLength(60);
    expect(info.trimEnd().endsWith('…')).toBe(true);
    const warn = humanLogLine(json({ level: 40, msg: long }), 60);
    const rows = warn.trimEnd().split('\n');
    expect(rows.length).toBeGreaterThan(2);
    for (const r of rows) expect([...r].length).toBeLessThanOrEqual(60);
    expect(rows.map((r) => r.trim()).join(' ')).toContain(long.trim());
  });

  it('LOG_FORMAT chooses; else human on a terminal unless the command prints JSON', () => {
    expect(chooseLogFormat(false, {}, true)).toBe('human');
    expect(chooseLogFormat(true, {}, true)).toBe('json');
    expect(chooseLogFormat(false, {}, false)).toBe('json');
    expect(chooseLogFormat(false, { LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(chooseLogFormat(true, { LOG_FORMAT: 'human' }, false)).toBe('human');
    expect(() => chooseLogFormat(false, { LOG_FORMAT: 'pretty' }, true)).toThrow(ConfigError);
  });
});

describe.skipIf(!hasScript)('on a terminal', () => {
  const firstSpend = async (extra: string[], env: Record<string, string> = {}) => {
    const cfg = configFile(`store: "${sqliteStore()}"\n`);
    const { code, out } = await cliOnTerminal(
      ['spend', 'default', '--cost', '1', '--config', cfg, ...extra],
      { cols: 80, rows: 40 },
      { LOG_LEVEL: 'info', ...env },
    );
    expect(code).toBe(0);
    return out.replace(/\r/g, '');
  };

  it('writes human lines; LOG_FORMAT=json and --json keep JSON', { timeout: 60_000 }, async () => {
    const human = await firstSpend([]);
    // Wrapped at a word within the terminal's 80 columns.
    expect(human).toMatch(
      /^\d\d:\d\d:\d\d WARN created a new SQLite ledger: [^\n]*\n {2}\S[^\n]* · path=\//m,
    );
    for (const l of human.split('\n').filter((x) => /^(\d\d:| {2})/.test(x)))
      expect([...l].length).toBeLessThanOrEqual(80);
    expect(human).not.toContain('{"level"');
    for (const out of [await firstSpend([], { LOG_FORMAT: 'json' }), await firstSpend(['--json'])])
      expect(out).toMatch(/^\{"level":40,.*"msg":"created a new SQLite ledger/m);
  });
});

describe('JSON logs to the end', () => {
  it('a fatal error after JSON lines is one more JSON line, with its code and exit status', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      // `run` opens its store before it serves the page: a new ledger is logged, then the port fails.
      // (`serve` listens first, so a port in use stops it before any line.)
      const cfg = configFile(`store: "${sqliteStore()}"\n`);
      const r = await runChild(['run', '--http', `127.0.0.1:${port}`, '--config', cfg], {
        LOG_LEVEL: 'info',
        YOUTUBE_API_KEY: 'test-key',
      });
      expect(r.code).toBe(69);
      const lines = r.stderr
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.length).toBeGreaterThan(1);
      expect(lines.at(-1)).toMatchObject({
        level: 60,
        code: 'QG_ADDRESS_IN_USE',
        exitCode: 69,
        name: 'quota-guard',
      });
    } finally {
      taken.close();
    }
  });

  it('a fatal error before any log line stays the one plain line', async () => {
    const r = await cli('status', '--config', '/nonexistent/quota-guard.yaml');
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/^quota-guard: .*\(QG_CONFIG_\w+\)\n$/);
  });

  it('serve says when it stops, and why', { timeout: 60_000 }, async () => {
    const cfg = configFile(`store: "${sqliteStore()}"\n`);
    expect((await cli('spend', 'default', '--cost', '1', '--config', cfg)).code).toBe(0);
    const s = startChild(['serve', '--http', '127.0.0.1:0', '--config', cfg], { LOG_LEVEL: 'info' });
    for (let i = 0; i < 300 && !/serving http/.test(s.stderr); i++) await sleep(50);
    s.child.kill('SIGTERM');
    const e = await s.exited;
    expect(e.code).toBe(0);
    const last = JSON.parse(e.stderr.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(last).toMatchObject({ level: 30, by: 'SIGTERM' });
    expect(String(last['msg'])).toMatch(/^stopped serving http:\/\/127\.0\.0\.1:\d+ \(SIGTERM\)$/);
  });
});
