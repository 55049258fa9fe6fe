/**
 * WAL checkpoints off the writing thread. A checkpoint copies the WAL back into the database file
 * and fsyncs both; run by the writer (SQLite's auto-checkpoint) it stalls the page transaction that
 * triggers it, and during a long ingest those stalls were about a fifth of the wall time. A worker
 * thread with its own connection runs PASSIVE checkpoints (they never block the writer) a few times
 * a second instead. The writer keeps a larger auto-checkpoint as a backstop: a PASSIVE checkpoint
 * that races with new commits cannot let the WAL start over, so the writer's own checkpoint (which
 * then finds almost everything already copied) still bounds the WAL file.
 */
import { Worker } from 'node:worker_threads';
import { sqliteDriver } from '../../sqlite/driver.js';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const done = new Int32Array(workerData.done);
let db;
let timer;
function stop() {
  clearInterval(timer);
  try { db && db.close(); } catch {}
  db = undefined;
  Atomics.store(done, 0, 1);
  Atomics.notify(done, 0);
}
try {
  const Database = require(workerData.lib);
  db = new Database(workerData.path, { fileMustExist: true });
  db.pragma('busy_timeout = 0');
  timer = setInterval(() => {
    try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
  }, workerData.intervalMs);
} catch {
  stop();
}
parentPort.on('message', () => {
  stop();
  parentPort.close();
});
`;

/** Pages of WAL after which the writer checkpoints itself while the worker runs (about 200 MB). */
export const BACKSTOP_CHECKPOINT_PAGES = 50_000;

/**
 * While the worker runs, the WAL file is cut back to this size (instead of 64 MB) when it starts
 * over: a little more than the backstop's WAL, so it is not cut back at all. The WAL then starts
 * over on blocks the file already has, and writing over them costs the kernel less than growing
 * the file again each time (an ingest of 1,000,000 videos took about 6 % less CPU).
 */
export const BACKSTOP_WAL_BYTES = 256 * 2 ** 20;

export interface Checkpointer {
  /** Stop, and wait (at most `waitMs`) until the worker has closed its connection. */
  stop(waitMs?: number): void;
}

/** Start checkpointing `path` in a worker thread. It never keeps the process alive. */
export function startCheckpointer(path: string, intervalMs = 250): Checkpointer {
  const lib = sqliteDriver().entry;
  const done = new SharedArrayBuffer(4);
  const worker = new Worker(WORKER, {
    eval: true,
    execArgv: [],
    workerData: { path, lib, intervalMs, done },
  });
  worker.on('error', () => {
    // A checkpoint is an optimisation: the writer's own auto-checkpoint still runs.
  });
  worker.unref();
  const flag = new Int32Array(done);
  return {
    stop(waitMs = 2000) {
      worker.postMessage('stop');
      // Once the worker has closed its connection, the writer's close is the last one, which
      // checkpoints and removes the WAL file. A worker still starting up answers after it has started.
      Atomics.wait(flag, 0, 0, waitMs);
    },
  };
}
