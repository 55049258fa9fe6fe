/**
 * Text from the upstream never drives the operator's terminal: escape sequences (clear screen,
 * window title) and bidi overrides in titles, channels and descriptions are neutralised in `search`
 * output, error lines and log lines on a terminal.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openLedger } from '../../src/ledger/index.js';
import { terminalJson, terminalJsonLine, terminalText } from '../../src/terminal-text.js';
import { openCache } from '../../src/youtube/cache/index.js';
import { video } from '../cache/helpers.js';
import { cli, configFile, dir } from './helpers.js';

const HOSTILE = 'Cat\u001b[2J\u001b]0;pwned\u0007 video\u009b31m \u202eexe.gnp\u2066x\u2069\nnext line';
/** Written out here independently of src/terminal-text.ts: C0 (but newline), DEL, C1, bidi controls. */
function unsafeIn(s: string): string[] {
  return [...s].filter((ch) => {
    const c = ch.codePointAt(0)!;
    return (
      (c < 0x20 && c !== 0x0a) ||
      (c >= 0x7f && c <= 0x9f) ||
      [0x061c, 0x200e, 0x200f].includes(c) ||
      (c >= 0x202a && c <= 0x202e) ||
      (c >= 0x2066 && c <= 0x2069)
    );
  });
}

beforeEach(() => {
  vi.stubEnv('LOG_LEVEL', 'silent');
  vi.stubEnv('QUOTA_GUARD_CONFIG', '');
});
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('terminal text', () => {
  it('control, C1 and bidi characters become U+FFFD and line breaks a space; the words stay', () => {
    const safe = terminalText(HOSTILE);
    expect(unsafeIn(safe)).toEqual([]);
    expect(safe).not.toContain('\n');
    expect(safe).toContain('Cat');
    expect(safe).toContain('exe.gnp');
    expect(safe).toContain('next line');
  });

  it('a JSON log line stays the same JSON, with nothing unsafe left in it', () => {
    const line = `${JSON.stringify({ title: HOSTILE, msg: 'page written' })}\n`;
    const safe = terminalJsonLine(line);
    expect(unsafeIn(safe)).toEqual([]);
    expect(JSON.parse(safe)).toEqual(JSON.parse(line));
  });

  it('`search` prints hostile titles, channels and snippets without their escape sequences', async () => {
    const path = join(dir, 'hostile-cache.db');
    const cache = openCache(path);
    cache.upsertVideos([
      video('h1', { title: HOSTILE, channelTitle: `Chan\u202e${HOSTILE}`, description: HOSTILE }),
    ]);
    cache.close();
    const out = await cli('search', 'cat', '--config', configFile(`cache: { path: ${path} }\n`));
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('exe.gnp');
    expect(unsafeIn(out.stdout)).toEqual([]);
  });

  it('`search --json` escapes them as \\uXXXX: nothing unsafe printed, the text comes back whole', async () => {
    const path = join(dir, 'hostile-json-cache.db');
    const cache = openCache(path);
    const title = `${HOSTILE} \u009b\u007f\u2028end`;
    cache.upsertVideos([video('j1', { title, channelTitle: `Chan\u202e${HOSTILE}`, description: HOSTILE })]);
    cache.close();
    const out = await cli('search', 'cat', '--json', '--config', configFile(`cache: { path: ${path} }\n`));
    expect(out.code).toBe(0);
    expect(unsafeIn(out.stdout)).toEqual([]);
    expect(out.stdout).not.toContain('\u2028');
    expect(out.stdout).toContain('\\u202e');
    expect(out.stdout).toContain('\\u009b');
    const parsed = JSON.parse(out.stdout) as { hits: Array<{ title: string; channelTitle: string }> };
    expect(parsed.hits[0]!.title).toBe(title);
    expect(parsed.hits[0]!.channelTitle).toBe(`Chan\u202e${HOSTILE}`);
  });

  it('`unblock --json` and `status --json` escape a block reason a client reported', async () => {
    const ledgerPath = join(dir, 'hostile-reason.db');
    const cfg = configFile(`store: sqlite:${ledgerPath}\n`);
    expect((await cli('spend', 'default', '--cost', '1', '--config', cfg)).code).toBe(0);
    const ledger = await openLedger(`sqlite:${ledgerPath}`);
    await ledger.block('qg:{default}:units', Date.now() + 3_600_000, `reported by php: ${HOSTILE}`);
    await ledger.close();
    const status = await cli('status', '--json', '--config', cfg);
    expect(unsafeIn(status.stdout)).toEqual([]);
    expect(status.stdout).toContain('\\u202e');
    const out = await cli('unblock', 'default', 'units', '--json', '--config', cfg);
    expect(out.code).toBe(0);
    expect(unsafeIn(out.stdout)).toEqual([]);
    expect((JSON.parse(out.stdout) as { reason: string }).reason).toBe(`reported by php: ${HOSTILE}`);
  });

  it('terminalJson is JSON.stringify, escaped: the same value back', () => {
    const value = { a: HOSTILE, b: ['\u0085\u200f\u061c'], n: 1 };
    expect(unsafeIn(terminalJson(value, 2))).toEqual([]);
    expect(JSON.parse(terminalJson(value, 2))).toEqual(value);
  });
});
