/**
 * A page as a real browser lays it out: Debian's headless Chromium (never a downloaded one), asked
 * for the DOM it ends with (`--dump-dom`) or for a screenshot. Screenshots shown in docs/ are
 * rewritten from the tests when UPDATE_SCREENSHOT=1.
 */
import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

/** The Chromium on PATH, if there is one; tests that need it are skipped without it. */
export const CHROMIUM = ['chromium', 'chromium-browser'].find(
  (c) => spawnSync(c, ['--version'], { stdio: 'ignore' }).status === 0,
);

export const CHROMIUM_HINT = 'no chromium on PATH (Debian: apt-get install -y chromium; .ci/run installs it)';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--hide-scrollbars',
];

/** A browser window's size in pixels; without one, Chromium's default. */
export interface WindowSize {
  width: number;
  height: number;
}

async function chromium(args: string[], url: string, size: WindowSize | undefined): Promise<string> {
  if (!CHROMIUM) throw new Error(CHROMIUM_HINT);
  const window = size ? [`--window-size=${size.width},${size.height}`] : [];
  const { stdout } = await execFileP(CHROMIUM, [...FLAGS, ...window, ...args, url], {
    timeout: 60_000,
    maxBuffer: 64 * 2 ** 20,
  });
  return stdout;
}

/** The DOM of `url` once Chromium has loaded it (scripts run), as HTML. */
export function dumpDom(url: string, size?: WindowSize): Promise<string> {
  return chromium(['--dump-dom'], url, size);
}

/** A screenshot of `url` in a window of `size`, written to `file` (PNG). */
export async function screenshot(url: string, file: string, size: WindowSize): Promise<void> {
  await chromium([`--screenshot=${file}`], url, size);
}

/** With UPDATE_SCREENSHOT=1, `file` replaces the screenshot at `docsPath` (under docs/). */
export function updateDocsScreenshot(file: string, docsPath: string): void {
  if (process.env['UPDATE_SCREENSHOT'] === '1') copyFileSync(file, join(process.cwd(), 'docs', docsPath));
}
