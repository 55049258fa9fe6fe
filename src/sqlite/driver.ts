/**
 * Whether the installed better-sqlite3 can run on this Node. Before 13 it wraps its objects in Node's
 * own `ObjectWrap`, whose destructor Node 24 asserts on: a database or statement freed by the garbage
 * collector outside JavaScript (an idle collection, the process's exit) aborts the process with
 * `Assertion failed: (env) != nullptr` (exit 134), after the work is done or in the middle of it.
 * better-sqlite3 13 is built on Node-API and does not; it needs Node 22 or later, so the dependency
 * allows 12 or 13 and npm installs the newest one whose `engines` fit the Node it runs on.
 */
import { createRequire } from 'node:module';
import { StoreUnavailableError } from '../errors.js';

const major = (version: string) => Number(/^v?(\d+)\./.exec(version)?.[1] ?? Number.NaN);

/** What is wrong with running this driver version on this Node, or undefined when nothing is. */
export function driverProblem(nodeVersion: string, driverVersion: string): string | undefined {
  if (major(nodeVersion) < 24 || major(driverVersion) >= 13) return undefined;
  return (
    `better-sqlite3 ${driverVersion} aborts Node ${nodeVersion.replace(/^v/, '')} processes when it frees a ` +
    'database or statement (Node 24 and later need better-sqlite3 13): install quota-guard again with ' +
    'this Node, which installs better-sqlite3 13, or run `npm install --no-save better-sqlite3@13` in a checkout'
  );
}

let checked = false;

/** Throws `QG_STORE_UNAVAILABLE` before the first SQLite store opens when the driver does not fit this Node. */
export function assertDriverFits(): void {
  if (checked) return;
  const { version } = createRequire(import.meta.url)('better-sqlite3/package.json') as { version: string };
  const problem = driverProblem(process.version, version);
  if (problem !== undefined) throw new StoreUnavailableError(problem, { details: { driver: version } });
  checked = true;
}
