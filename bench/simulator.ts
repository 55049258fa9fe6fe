/**
 * The simulator in its own process (`quota-guard simulate`, as the drill runs it), for the bench
 * sections that measure calls to it over loopback. Not a section: run.ts does not list it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The API key the simulator accepts. */
export const KEY = 'bench-key';
const BIN = fileURLToPath(new URL('../src/cli/bin.ts', import.meta.url));

/**
 * Start the simulator with a quota no bench run reaches and `extra` arguments; resolves with its
 * base URL once it prints it (within 30 s).
 */
export async function startSimulatorProcess(
  extra: string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      BIN,
      'simulate',
      '--port',
      '0',
      '--key',
      `${KEY}@bench`,
      '--quota',
      '1000000000',
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout!.on('data', (c) => {
    out += String(c);
  });
  for (let i = 0; i < 300; i++) {
    const m = /simulator: (http:\/\/\S+\/youtube\/v3)/.exec(out);
    if (m) return { url: m[1]!, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`the simulator did not start: ${out}`);
}
