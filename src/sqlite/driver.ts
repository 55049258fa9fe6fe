/**
 * The SQLite driver, better-sqlite3, in the major that runs on this Node. No single version runs on
 * every supported line:
 *
 * - 12 wraps its objects in Node's own `ObjectWrap`, whose destructor Node 24 asserts on: a database
 *   or statement freed by the garbage collector outside JavaScript (an idle collection, the
 *   process's exit) aborts the process with `Assertion failed: (env) != nullptr` (exit 134).
 * - 13 is built on Node-API 10, which Node 20 lacks: opening a database there is a segmentation
 *   fault (exit 139).
 *
 * One lockfile cannot pin 12 for Node 20 and 13 for Node 22 and later, so the package depends on
 * both, each under an npm alias of its own (`better-sqlite3-12`, `better-sqlite3-13`) and as an
 * optional dependency: npm leaves out an optional package whose `engines` do not fit the Node it
 * installs with (13 on Node 20) or whose install script fails (12 where it cannot be built), and the
 * install goes on. Whichever lockfile a project has, the driver that fits is there; this module
 * picks it by its version, before its addon is loaded, and says in one line what to do when none
 * fits. docs/sqlite.md tells the whole story.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { StoreUnavailableError } from '../errors.js';

/** The aliases package.json installs better-sqlite3 under, the preferred one first. */
export const DRIVER_PACKAGES = ['better-sqlite3-13', 'better-sqlite3-12'] as const;

export type DriverPackage = (typeof DRIVER_PACKAGES)[number];

/** An installed driver package: its alias and the better-sqlite3 version it holds. */
export interface InstalledDriver {
  name: DriverPackage;
  version: string;
}

export interface SqliteDriver extends InstalledDriver {
  /** Its entry file, for a worker thread that opens the same driver. */
  entry: string;
  Database: typeof BetterSqlite3;
}

const major = (version: string) => Number(/^v?(\d+)\./.exec(version)?.[1] ?? Number.NaN);

/** What is wrong with running this driver version on this Node, or undefined when nothing is. */
export function driverProblem(nodeVersion: string, driverVersion: string): string | undefined {
  const node = major(nodeVersion);
  const driver = major(driverVersion);
  if (driver >= 13 && node < 22) {
    return `better-sqlite3 ${driverVersion} crashes Node ${nodeVersion.replace(/^v/, '')} (it needs Node 22 or later)`;
  }
  if (driver < 13 && node >= 24) return `better-sqlite3 ${driverVersion} aborts Node 24 and later`;
  return undefined;
}

/**
 * The driver to load on this Node among those installed (the newest that fits), or the one line
 * that says why none fits and what to run.
 */
export function chooseDriver(
  nodeVersion: string,
  installed: readonly InstalledDriver[],
): { driver: InstalledDriver } | { problem: string } {
  for (const name of DRIVER_PACKAGES) {
    const found = installed.find((d) => d.name === name);
    if (found && driverProblem(nodeVersion, found.version) === undefined) return { driver: found };
  }
  const node = nodeVersion.replace(/^v/, '');
  const needed = major(nodeVersion) >= 22 ? 'better-sqlite3 13' : 'better-sqlite3 12';
  const unfit = installed.map((d) => `${driverProblem(nodeVersion, d.version)}; `).join('');
  return {
    problem:
      `no SQLite driver for Node ${node}: ${unfit}${needed}, an optional dependency of quota-guard, is not ` +
      'installed (npm leaves it out when it installs with another Node, with --omit=optional, or when its install ' +
      'fails); run `npm install` where ' +
      'quota-guard is installed (your project, or a checkout), or install quota-guard again with this Node',
  };
}

/** The driver packages that are installed beside this module, read without loading them. */
function installedDrivers(require: NodeJS.Require): InstalledDriver[] {
  const out: InstalledDriver[] = [];
  for (const name of DRIVER_PACKAGES) {
    let file: string;
    try {
      file = require.resolve(`${name}/package.json`);
    } catch {
      continue;
    }
    const { version } = JSON.parse(readFileSync(file, 'utf8')) as { version: string };
    out.push({ name, version });
  }
  return out;
}

let chosen: InstalledDriver | undefined;
let loaded: SqliteDriver | undefined;

/** The driver package chosen on this Node (set before it is loaded), for messages about its addon. */
export function chosenDriver(): InstalledDriver | undefined {
  return chosen;
}

/**
 * The better-sqlite3 that runs on this Node, loaded on the first call (by the first SQLite store
 * that opens). Throws `QG_STORE_UNAVAILABLE` with one line, before any addon is loaded, when none
 * that fits is installed.
 */
export function sqliteDriver(): SqliteDriver {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const installed = installedDrivers(require);
  const choice = chooseDriver(process.version, installed);
  if ('problem' in choice) {
    throw new StoreUnavailableError(choice.problem, {
      details: { node: process.version, installed: installed.map((d) => `${d.name}@${d.version}`) },
    });
  }
  chosen = choice.driver;
  const entry = require.resolve(choice.driver.name);
  loaded = { ...choice.driver, entry, Database: require(entry) as typeof BetterSqlite3 };
  return loaded;
}
