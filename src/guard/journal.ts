/**
 * The guard's journal: a local append-only file of the spends the ledger could not be told about
 * when they were made — allowed while the store did not answer (fail-open), or sent and never
 * answered ("unknown"). Each line is one JSON object `{id, op, written, store, body}`; the guard
 * replays it into the ledger once the store answers again (src/guard/late.ts). docs/guard.md,
 * "The journal".
 *
 * - Private: created with mode 0600 in a directory made 0700; a line holds names, costs and times,
 *   never a key, token or store password (`store` is the redacted URL).
 * - Shared: several processes append to one file; each append, and each rewrite after a replay,
 *   holds `<journal>.lock` (created exclusively, holding the owner's pid; a lock whose owner is gone
 *   is taken over), so lines are never torn or lost in a rewrite.
 * - Bounded: past `maxBytes` an append is refused (`full`) and the guard says so in one line.
 *
 * Appends and rewrites are synchronous file calls under the lock, so the lock is held for
 * microseconds; nothing here waits for the store.
 */
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Tier } from '../config/tiers.js';
import type { UnsettledSpend } from '../errors.js';

/** The default bound of a journal file (as the clients' journals). */
export const DEFAULT_JOURNAL_MAX_BYTES = 1024 * 1024;
/** The journal's name in the data directory. */
export const DEFAULT_JOURNAL_FILE = 'journal.jsonl';
/** How long an append or a rewrite waits for another process's lock before giving up. */
const LOCK_WAIT_MS = 5000;
/** A lock older than this whose owner cannot be asked (another host) is taken over. */
const STALE_LOCK_MS = 30_000;

/** What a spend was: enough to resolve it again against the config (`resolveSpend`). */
export interface JournalBody {
  credential: string;
  bucket: string;
  method?: string;
  tier: Tier;
  cost: number;
  tag: string;
  /** When it was spent (epoch ms, this host's clock). */
  at: number;
  /** `unknown` only: whether the call site went on to the upstream (fail-open) or not (closed). */
  used?: boolean;
  /**
   * `unknown` only, for a spend sent without an entry id: the log entry it would have stored, asked
   * for by id (`Ledger.settle`) before anything is recorded.
   */
  spend?: UnsettledSpend;
}

/**
 * - `record`: a spend allowed unrecorded (fail-open): written at its time under entry `id`.
 * - `unknown`: a spend whose answer was lost: kept if used and recorded if it never landed, taken
 *   out (or voided) if not used.
 */
export type JournalOp = 'record' | 'unknown';

export interface JournalEntry {
  /** The ledger entry id the spend is recorded under (the caller's own, or one the guard chose). */
  id: string;
  op: JournalOp;
  /** When the line was written (epoch ms). */
  written: number;
  /** The store it belongs to (redacted URL and key prefix): another store's lines are left alone. */
  store: string;
  body: JournalBody;
}

export type AppendResult =
  | { ok: true }
  | { ok: false; reason: 'full' | 'locked' | 'failed'; message: string };

export interface JournalFileOptions {
  path: string;
  /** Refuse appends past this size (default 1 MiB). */
  maxBytes?: number;
}

/** One journal file. Every method is safe to call from several processes at once. */
export class JournalFile {
  readonly path: string;
  readonly maxBytes: number;
  readonly #lockPath: string;

  constructor(opts: JournalFileOptions) {
    this.path = opts.path;
    this.maxBytes = opts.maxBytes ?? DEFAULT_JOURNAL_MAX_BYTES;
    this.#lockPath = `${opts.path}.lock`;
  }

  /** Bytes in the file (0 when there is none). */
  size(): number {
    try {
      return statSync(this.path).size;
    } catch {
      return 0;
    }
  }

  /** Append entries as one write; refused whole when the file would pass `maxBytes`. */
  async append(entries: readonly JournalEntry[]): Promise<AppendResult> {
    const text = entries.map((e) => `${JSON.stringify(e)}\n`).join('');
    try {
      return await this.#locked((): AppendResult => {
        const size = this.size();
        if (size + Buffer.byteLength(text) > this.maxBytes) {
          return {
            ok: false,
            reason: 'full',
            message: `journal ${this.path} is full (${size} of ${this.maxBytes} bytes)`,
          };
        }
        const fd = openSync(this.path, 'a', 0o600);
        try {
          writeSync(fd, text);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        return { ok: true };
      });
    } catch (e) {
      const locked = (e as { code?: string }).code === 'LOCKED';
      return { ok: false, reason: locked ? 'locked' : 'failed', message: (e as Error).message };
    }
  }

  /** Every entry in the file; lines that are not entries (a torn tail after a crash) are counted. */
  async read(): Promise<{ entries: JournalEntry[]; bad: number }> {
    return this.#locked(() => parseJournal(this.#text()));
  }

  /** Take the entries with these ids out (the file goes when it is empty); resolves how many lines went. */
  async remove(ids: ReadonlySet<string>): Promise<number> {
    if (ids.size === 0) return 0;
    return this.#locked(() => {
      const lines = this.#text()
        .split('\n')
        .filter((line) => line.trim() !== '');
      const keep = lines.filter((line) => !ids.has(parseLine(line)?.id ?? ''));
      if (keep.length === lines.length) return 0;
      if (keep.length === 0) {
        unlinkQuietly(this.path);
        return lines.length;
      }
      const tmp = `${this.path}.${process.pid}.tmp`;
      const fd = openSync(tmp, 'w', 0o600);
      try {
        writeSync(fd, `${keep.join('\n')}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, this.path);
      return lines.length - keep.length;
    });
  }

  #text(): string {
    try {
      return readFileSync(this.path, 'utf8');
    } catch (e) {
      if ((e as { code?: string }).code === 'ENOENT') return '';
      throw e;
    }
  }

  /** Run `fn` holding `<journal>.lock`. */
  async #locked<T>(fn: () => T): Promise<T> {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (let n = 0; ; n++) {
      let fd: number;
      try {
        fd = openSync(this.#lockPath, 'wx', 0o600);
      } catch (e) {
        if ((e as { code?: string }).code !== 'EEXIST') throw e;
        if (this.#stale()) {
          unlinkQuietly(this.#lockPath);
          continue;
        }
        if (Date.now() > deadline) {
          throw Object.assign(new Error(`journal ${this.path}: locked by another process for 5 s`), {
            code: 'LOCKED',
          });
        }
        await sleep(Math.min(2 + n, 20));
        continue;
      }
      try {
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return fn();
      } finally {
        unlinkQuietly(this.#lockPath);
      }
    }
  }

  /** A lock whose process is gone on this host (or that is old and cannot be asked about). */
  #stale(): boolean {
    try {
      const pid = Number(readFileSync(this.#lockPath, 'utf8'));
      const age = Date.now() - statSync(this.#lockPath).mtimeMs;
      // Written but not yet holding its pid: only a lock old enough is another's crash.
      if (!Number.isInteger(pid) || pid <= 0) return age > STALE_LOCK_MS;
      try {
        process.kill(pid, 0);
        return false;
      } catch (e) {
        return (e as { code?: string }).code === 'ESRCH';
      }
    } catch {
      return false;
    }
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already.
  }
}

function parseLine(line: string): JournalEntry | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const e = v as Partial<JournalEntry>;
  const b = e.body as Partial<JournalBody> | undefined;
  if (typeof e.id !== 'string' || (e.op !== 'record' && e.op !== 'unknown')) return undefined;
  if (typeof e.store !== 'string' || typeof e.written !== 'number' || !b) return undefined;
  if (typeof b.credential !== 'string' || typeof b.bucket !== 'string' || typeof b.tag !== 'string')
    return undefined;
  if (typeof b.cost !== 'number' || typeof b.at !== 'number' || typeof b.tier !== 'string') return undefined;
  return e as JournalEntry;
}

/** The entries of a journal's text, and how many lines were not entries. */
export function parseJournal(text: string): { entries: JournalEntry[]; bad: number } {
  const entries: JournalEntry[] = [];
  let bad = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const e = parseLine(line);
    if (e) entries.push(e);
    else bad++;
  }
  return { entries, bad };
}
