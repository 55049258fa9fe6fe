import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { cli } from './helpers.js';

describe('usage mistakes', () => {
  it('are one line in the format of every other error, with exit 64', async () => {
    for (const [args, pattern] of [
      [['status', '--bogus'], /unknown option '--bogus'/],
      [['status', '--jsn'], /unknown option '--jsn' \(Did you mean --json\?\)/],
      [['spend', 'default', '--cost', 'abc'], /'--cost <n>' argument 'abc' is invalid/],
      [['spend', 'default'], /--cost: give --method, or --cost \(with --bucket\)/],
      [['spend', '--cost', '1'], /missing required argument 'credential'/],
      [['statu'], /unknown command 'statu'/],
    ] as const) {
      const out = await cli(...args);
      expect(out.code, args.join(' ')).toBe(64);
      expect(out.stdout).toBe('');
      const lines = out.stderr.trimEnd().split('\n');
      expect(lines, args.join(' ')).toHaveLength(1);
      expect(lines[0]).toMatch(/^quota-guard: /);
      expect(lines[0]).toMatch(pattern);
    }
  });
});

describe('the program a command line builds', () => {
  it('defines only the command it names, under the name the command gives itself; else all of them', () => {
    const all = buildProgram().commands.map((c) => c.name());
    expect(all.length).toBeGreaterThan(10);
    for (const name of all) {
      const defined = buildProgram(['node', 'quota-guard', name, '--help']).commands.map((c) => c.name());
      expect(defined, name).toEqual(name === 'completion' ? all : [name]);
    }
    for (const argv of [['--help'], ['help', 'spend'], ['statu'], []]) {
      expect(
        buildProgram(['node', 'quota-guard', ...argv]).commands.map((c) => c.name()),
        argv.join(' '),
      ).toEqual(all);
    }
  });
});
