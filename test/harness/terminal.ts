/**
 * The CLI on a real terminal: a pseudo-terminal from util-linux `script`, sized with `stty`, so the
 * CLI sees a TTY of a known width and everything it writes to it (control sequences included) comes
 * back as text.
 */
import { spawnSync } from 'node:child_process';
import { BIN, startProcess } from './child.js';

/** Whether `script` (util-linux) is on PATH; without it there is no terminal to give the CLI. */
export const hasScript = spawnSync('script', ['--version']).status === 0;

export interface TerminalSize {
  cols: number;
  rows: number;
}

/**
 * Run `quota-guard <args>` under a pseudo-terminal of `size`, with `env` on top of PATH and HOME
 * (no COLUMNS: the terminal's own width is the one to follow); resolves with its exit code and
 * everything the terminal received.
 */
export async function cliOnTerminal(
  args: string[],
  size: TerminalSize,
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  const cli = [process.execPath, '--import', 'tsx', BIN, ...args].map((a) => `'${a}'`).join(' ');
  const { code, stdout } = await startProcess(
    'script',
    ['-qefc', `stty cols ${size.cols} rows ${size.rows}; ${cli}`, '/dev/null'],
    { env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env }, timeoutMs: 60_000 },
  ).exited;
  return { code, out: stdout };
}
