/** A `quota-guard serve` process for the serve benchmarks: where it listens, and its RSS. */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The process's resident memory in MB, from /proc. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return Math.round(kb / 1024);
}

/** The URL the child says it serves at: the first group of `pattern` in its log. */
export async function listening(child: ChildProcess, pattern: RegExp): Promise<string> {
  let stderr = '';
  return await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 60_000);
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = pattern.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
}
