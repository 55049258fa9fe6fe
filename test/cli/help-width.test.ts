/**
 * `--help` at every level and `plan` on a real terminal 80 columns wide (a pseudo-terminal from
 * util-linux `script`, as test/cli/terminal-width.test.ts does for status): no line wider than the
 * terminal, and every description whole (wrapped at a word, never cut in one).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { ROOT } from '../harness/imports.js';
import { cliOnTerminal, hasScript } from '../harness/terminal.js';

if (!hasScript)
  console.warn('help-width: skipped, `script` (util-linux) is not on PATH to give the CLI a terminal');

const COLS = 80;
const words = (s: string) => s.replace(/\s+/g, ' ').trim();

async function onTerminal(args: string[]): Promise<{ code: number | null; lines: string[]; text: string }> {
  const { code, out } = await cliOnTerminal(args, { cols: COLS, rows: 60 }, { LOG_LEVEL: 'silent' });
  const text = out.replace(/\r/g, '');
  return { code, lines: text.split('\n'), text };
}

function fits(lines: string[], what: string): void {
  for (const l of lines) expect([...l].length, `${what}: ${l}`).toBeLessThanOrEqual(COLS);
}

describe.skipIf(!hasScript)(`on a terminal ${COLS} columns wide`, () => {
  const program = buildProgram();
  const commands = program.commands.filter((c) => !c.name().startsWith('_'));

  it('the top-level --help fits, each command’s description whole', { timeout: 60_000 }, async () => {
    const { code, lines, text } = await onTerminal(['--help']);
    expect(code).toBe(0);
    fits(lines, '--help');
    for (const c of commands) expect(words(text), c.name()).toContain(words(c.description()));
  });

  it('every command’s --help fits, each option’s description whole', { timeout: 300_000 }, async () => {
    for (const c of commands) {
      const { code, lines, text } = await onTerminal([c.name(), '--help']);
      expect(code, c.name()).toBe(0);
      fits(lines, `${c.name()} --help`);
      for (const o of c.options)
        expect(words(text), `${c.name()} ${o.flags}`).toContain(words(o.description));
    }
  });

  it('plan fits, its tables and advice wrapped at a word', { timeout: 60_000 }, async () => {
    const { code, lines, text } = await onTerminal([
      'plan',
      '--config',
      join(ROOT, 'test/plan/fixtures/overspends.yaml'),
    ]);
    expect(code).toBe(65);
    fits(lines, 'plan');
    expect(words(text)).toContain('12 charts in 10 regions × 4 pages × 288 runs × 1 unit');
    expect(words(text)).toContain(
      'raise credentials[0].buckets.units.quota to at least 14,324 (a quota increase from the upstream)',
    );
    expect(text).toMatch(/DOES NOT FIT \(1\):/);
  });
});
