/**
 * The only module that knows the Lua scripts: it reads them from `lua/` (inlining `@include`
 * lines), sends them (EVALSHA, and EVAL once when the server's script cache has lost a script), builds
 * every KEYS/ARGV array, and turns
 * script replies (negative codes included) into values and errors. No other file calls them.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Cluster, Command, type Redis } from 'ioredis';
import { QuotaGuardError } from '../errors.js';
import type { BackendRecord, BackendSpend, BackendVoid } from './backend.js';
import { LedgerCode, ledgerFailure } from './codes.js';
import { decisionOf } from './remembered.js';
import type {
  Decision,
  LateSummary,
  MinuteUnits,
  RecordResult,
  Snapshot,
  SpendEntry,
  VoidResult,
} from './types.js';

/** `lua/` next to `src/` and `dist/` alike. */
export const LUA_DIR = fileURLToPath(new URL('../../lua/', import.meta.url));

export interface LoadedScript {
  /** File name without `.lua`, e.g. `peek-2`. */
  file: string;
  /** The script as sent to Redis, includes inlined. */
  lua: string;
  /** SHA1 of `lua`: what SCRIPT LOAD answers and what EVALSHA uses. */
  sha: string;
  /** The number of KEYS, from the file name (`peek-2` → 2); undefined when the caller decides (`spend`). */
  keys: number | undefined;
}

/** `--- @include "name"` on a line of its own, at any indentation: replaced by lua/includes/name.lua. */
const INCLUDE = /^[ \t]*--- @include "([\w-]+)"[ \t]*$/gm;

/**
 * `source` (the file `from`, relative to `dir`) with every include line replaced by the include's
 * text, recursively. An include is inlined at each line that asks for it, even twice in one script:
 * branch-scoped includes rely on it (docs/lua.md). A missing include or a cycle is reported with
 * the file that asked for it.
 */
function inline(source: string, dir: string, from: string, chain: readonly string[] = []): string {
  return source.replace(INCLUDE, (_line, name: string) => {
    const file = `includes/${name}.lua`;
    if (chain.includes(name)) {
      throw new QuotaGuardError(
        'QG_INTERNAL',
        `lua/${from}: @include "${name}" is a cycle (${[...chain, name].join(' → ')})`,
      );
    }
    let text: string;
    try {
      text = readFileSync(`${dir}${file}`, 'utf8');
    } catch (e) {
      throw new QuotaGuardError('QG_INTERNAL', `lua/${from}: @include "${name}": there is no lua/${file}`, {
        cause: e,
      });
    }
    return inline(text, dir, file, [...chain, name]).trimEnd();
  });
}

/** Every script in `lua/`, ready to send. */
export function loadScripts(dir = LUA_DIR): LoadedScript[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.lua'))
    .sort()
    .map((f) => {
      const lua = inline(readFileSync(`${dir}${f}`, 'utf8'), dir, f);
      const file = f.slice(0, -'.lua'.length);
      const keys = /-(\d+)$/.exec(file)?.[1];
      return {
        file,
        lua,
        sha: createHash('sha1').update(lua).digest('hex'),
        keys: keys === undefined ? undefined : Number(keys),
      };
    });
}

let cached: LoadedScript[] | undefined;

type ScriptReply = number | string | Array<number | string | null>;
type ScriptArg = string | number;
type ScriptName =
  | 'spend'
  | 'refund'
  | 'peek-2'
  | 'used-2'
  | 'frees-2'
  | 'block-1'
  | 'unblock-1'
  | 'record-run'
  | 'record'
  | 'void'
  | 'per-minute-2'
  | 'late-2';

const UTF8 = { replyEncoding: 'utf8' } as const;

function isNoScript(e: unknown): boolean {
  return (e as { message?: unknown } | null)?.message?.toString().startsWith('NOSCRIPT') === true;
}

/** The ledger scripts on a connection: calls go by SHA; a NOSCRIPT reply sends the script itself once. */
export function registerScripts(client: Redis | Cluster, keyPrefix = ''): LedgerScripts {
  cached ??= loadScripts();
  return new LedgerScripts(client, cached, keyPrefix);
}

/**
 * Sends one script call as a plain EVALSHA command (KEYS and ARGV flat in `args`, after a slot for
 * the SHA), and when the server's script cache has lost the script (NOSCRIPT: a restart or SCRIPT
 * FLUSH) sends it once more as EVAL, which also caches it again. A script that did not run can be
 * sent again safely. ioredis' `defineCommand` would do the same, at the price of an extra promise,
 * an argument copy and a closure per call, which is measurable on the spend path.
 */
class ScriptCaller {
  readonly #client: Redis | Cluster;
  readonly lua: string;
  readonly sha: string;
  readonly #file: string;
  readonly #keys: number | undefined;

  constructor(client: Redis | Cluster, s: LoadedScript) {
    this.#client = client;
    this.lua = s.lua;
    this.sha = s.sha;
    this.#file = s.file;
    this.#keys = s.keys;
  }

  /** `args[0]` is overwritten with the SHA; the others are numkeys, KEYS, ARGV. */
  evalsha(args: ScriptArg[]): Promise<ScriptReply> {
    args[0] = this.sha;
    return this.#client.sendCommand(new Command('evalsha', args, UTF8)) as Promise<ScriptReply>;
  }

  /** What to do with a failed `evalsha(args)`: resend as EVAL on NOSCRIPT, else reject with `e`. */
  retry(args: ScriptArg[], e: unknown): Promise<ScriptReply> {
    if (!isNoScript(e)) return Promise.reject(e);
    args[0] = this.lua;
    return this.#client.sendCommand(new Command('eval', args, UTF8)) as Promise<ScriptReply>;
  }

  /**
   * KEYS and ARGV: evalsha with the NOSCRIPT fallback, for the calls off the hot path. The key count
   * is the file name's (`peek-2`: two keys); a call with another number of keys is a bug.
   */
  call(keys: readonly string[], ...argv: ScriptArg[]): Promise<ScriptReply> {
    if (this.#keys !== undefined && keys.length !== this.#keys) {
      throw new QuotaGuardError(
        'QG_INTERNAL',
        `lua/${this.#file}.lua takes ${this.#keys} key(s), called with ${keys.length}`,
      );
    }
    const args: ScriptArg[] = ['', keys.length, ...keys, ...argv];
    return this.evalsha(args).catch((e: unknown) => this.retry(args, e));
  }
}

/** Internal keys of a budget key: K with a `{tag}` gets suffixes, any other K is wrapped as `{K}`. */
export function internalKeys(key: string, prefix = ''): { log: string; meta: string } {
  const base = hashTagged(key);
  return { log: `${prefix}${base}:log`, meta: `${prefix}${base}:meta` };
}

/** A key with a `{hash tag}` (the whole key when it has none). */
function hashTagged(key: string): string {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key : `{${key}}`;
}

/** The set of a budget's entries recorded late (lua/record.lua, lua/late-2.lua). */
export function lateKey(key: string, prefix = ''): string {
  return `${prefix}${hashTagged(key)}:late`;
}

function fail(reply: Array<number | string | null>, key: string, field?: string, windowMs?: number): never {
  throw ledgerFailure({
    code: Number(reply[0]),
    key,
    ...(reply[1] !== undefined && { detail: Number(reply[1]) }),
    ...(windowMs !== undefined && { windowMs }),
    ...(field !== undefined && { field }),
  });
}

function asArray(reply: ScriptReply, what: string): Array<number | string | null> {
  if (!Array.isArray(reply)) {
    throw new QuotaGuardError('QG_INTERNAL', `ledger script ${what} returned an unexpected reply`);
  }
  return reply;
}

/** Typed calls of the scripts. */
export class LedgerScripts {
  readonly #spend: ScriptCaller;
  readonly #refund: ScriptCaller;
  readonly #peek: ScriptCaller;
  readonly #used: ScriptCaller;
  readonly #frees: ScriptCaller;
  readonly #block: ScriptCaller;
  readonly #unblock: ScriptCaller;
  readonly #recordRun: ScriptCaller;
  readonly #record: ScriptCaller;
  readonly #void: ScriptCaller;
  readonly #perMinute: ScriptCaller;
  readonly #late: ScriptCaller;
  readonly #prefix: string;
  readonly #keyCache = new Map<string, { log: string; meta: string }>();

  readonly #client: Redis | Cluster;

  constructor(client: Redis | Cluster, scripts: readonly LoadedScript[], prefix = '') {
    const caller = (file: ScriptName) => {
      const s = scripts.find((x) => x.file === file);
      if (!s) throw new QuotaGuardError('QG_INTERNAL', `lua/${file}.lua is missing`);
      return new ScriptCaller(client, s);
    };
    this.#spend = caller('spend');
    this.#refund = caller('refund');
    this.#peek = caller('peek-2');
    this.#used = caller('used-2');
    this.#frees = caller('frees-2');
    this.#block = caller('block-1');
    this.#unblock = caller('unblock-1');
    this.#recordRun = caller('record-run');
    this.#record = caller('record');
    this.#void = caller('void');
    this.#perMinute = caller('per-minute-2');
    this.#late = caller('late-2');
    this.#prefix = prefix;
    this.#client = client;
  }

  /** All keys one spend touches, in KEYS order. */
  spendKeys(keys: readonly string[]): string[] {
    const out: string[] = [];
    for (const k of keys) {
      const ik = this.#internal(k);
      out.push(ik.log, ik.meta);
    }
    return out;
  }

  /** internalKeys with the prefix, remembered for the keys in use (a budget key is spent again and again). */
  #internal(key: string): { log: string; meta: string } {
    let ik = this.#keyCache.get(key);
    if (!ik) {
      if (this.#keyCache.size >= 1024) this.#keyCache.clear();
      ik = internalKeys(key, this.#prefix);
      this.#keyCache.set(key, ik);
    }
    return ik;
  }

  /** `onError` maps a failed call (one promise for both outcomes: this is the hot path). */
  spend(req: BackendSpend, onError: (e: unknown, req: BackendSpend) => never): Promise<Decision> {
    const n = req.budgets.length;
    if (req.entry) return this.#spendEntry(req, req.entry, onError);
    // (SHA), numkeys, KEYS (log, meta per budget), then ARGV: id, cost, (limit, window) per budget.
    const args: ScriptArg[] = new Array(2 + 4 * n + 2);
    const budgetKeys: string[] = new Array(n);
    args[1] = 2 * n;
    args[2 * n + 2] = req.id;
    args[2 * n + 3] = req.cost;
    for (let i = 0; i < n; i++) {
      const b = req.budgets[i]!;
      const ik = this.#internal(b.key);
      args[2 + 2 * i] = ik.log;
      args[3 + 2 * i] = ik.meta;
      args[2 * n + 4 + 2 * i] = b.limit;
      args[2 * n + 5 + 2 * i] = b.windowMs;
      budgetKeys[i] = b.key;
    }
    return this.#evalSpend(args, req, budgetKeys, onError);
  }

  /** Run the spend script (loading it again when the server lost it) and read its decision. */
  #evalSpend(
    args: ScriptArg[],
    req: BackendSpend,
    budgetKeys: string[],
    onError: (e: unknown, req: BackendSpend) => never,
  ) {
    // Inline arrows, not named consts: tsx (which runs the bench) wraps a named closure in a
    // keepNames helper on every call.
    return this.#spend.evalsha(args).then(
      (reply) => this.#decision(req, budgetKeys, reply),
      (e: unknown) =>
        this.#spend.retry(args, e).then(
          (reply) => this.#decision(req, budgetKeys, reply),
          (e2: unknown) => onError(e2, req),
        ),
    );
  }

  /** A spend with an entry key (the last KEY) and its request (ARGV after the budgets). */
  #spendEntry(req: BackendSpend, entry: SpendEntry, onError: (e: unknown, req: BackendSpend) => never) {
    const keys = [...this.spendKeys(req.budgets.map((b) => b.key)), this.#prefix + entry.key];
    const argv: ScriptArg[] = [req.id, req.cost];
    for (const b of req.budgets) argv.push(b.limit, b.windowMs);
    argv.push(entry.request, entry.recallOnly ? '1' : '0');
    const args: ScriptArg[] = ['', keys.length, ...keys, ...argv];
    return this.#evalSpend(
      args,
      req,
      req.budgets.map((b) => b.key),
      onError,
    );
  }

  /** The request an entry was remembered with (the part after the decision), or undefined. */
  async recallEntry(key: string): Promise<string | undefined> {
    const v = await this.#client.get(this.#prefix + key);
    if (v === null) return undefined;
    const bar = v.indexOf('|');
    return bar < 0 ? undefined : v.slice(bar + 1);
  }

  #decision(req: BackendSpend, budgetKeys: string[], reply: ScriptReply): Decision {
    const r = asArray(reply, 'spend').map(Number);
    const replayed = r[0]! >= 2;
    if (replayed) r[0] = r[0]! - 2;
    if (r[0] === 1 || r[0] === 0) {
      return decisionOf(r, { id: req.id, keys: budgetKeys, cost: req.cost }, replayed);
    }
    this.#entryFailure(r, req.budgets, req.entry);
  }

  /** A negative code from a script call with an entry and budgets: the typed error. */
  #entryFailure(
    r: readonly number[],
    budgets: ReadonlyArray<{ key: string; windowMs: number }>,
    entry: Pick<SpendEntry, 'key' | 'id'> | undefined,
  ): never {
    const code = r[0]!;
    if (code === LedgerCode.EntryConflict || code === LedgerCode.EntryUnknown) {
      throw ledgerFailure({ code, key: entry?.key ?? '', ...(entry ? { entry: entry.id } : {}) });
    }
    if (code === LedgerCode.Corrupt && r[1] === 0 && entry) fail([code], entry.key);
    const i = r[1]! - 1;
    const b = budgets[i] ?? budgets[0]!;
    fail([code, r[2] ?? null], b.key, `budgets[${Math.max(0, i)}].windowMs`, b.windowMs);
  }

  /** KEYS (log, meta per budget, then the entry key) of a record or a void. */
  #entryKeys(budgets: ReadonlyArray<{ key: string }>, entry: { key: string }): string[] {
    return [...this.spendKeys(budgets.map((b) => b.key)), this.#prefix + entry.key];
  }

  async record(req: BackendRecord): Promise<RecordResult> {
    const keys = [...this.#entryKeys(req.budgets, req.entry), lateKey(req.budgets[0]!.key, this.#prefix)];
    const argv: ScriptArg[] = [req.id, req.cost, req.at, req.replace ? '1' : '0', req.entry.request];
    for (const b of req.budgets) argv.push(b.windowMs);
    const r = asArray(await this.#record.call(keys, ...argv), 'record').map(Number);
    const outcome = (['recorded', 'replayed', 'dropped'] as const)[r[0]! - 1];
    if (!outcome) this.#entryFailure(r, req.budgets, req.entry);
    const at = outcome === 'dropped' ? req.at : r[1]!;
    return { outcome, at, keys: req.budgets.map((b) => b.key), cost: req.cost, id: req.id };
  }

  async void(req: BackendVoid): Promise<VoidResult> {
    const keys = this.#entryKeys(req.budgets, req.entry);
    const longest = Math.max(...req.budgets.map((b) => b.windowMs));
    const r = asArray(await this.#void.call(keys, req.entry.id, longest), 'void').map(Number);
    const outcome = (['none', 'refunded', 'voided'] as const)[r[0]!];
    if (!outcome) this.#entryFailure(r, req.budgets, req.entry);
    return { outcome, cost: outcome === 'refunded' ? r[1]! : 0 };
  }

  async perMinute(
    key: string,
    windowMs: number,
    fromMs: number,
    toMs: number,
    grid: { minuteMs: number; originMs: number },
  ): Promise<MinuteUnits[]> {
    const ik = this.#internal(key);
    const r = asArray(
      await this.#perMinute.call([ik.log, ik.meta], windowMs, fromMs, toMs, grid.minuteMs, grid.originMs),
      'per-minute',
    );
    if (Number(r[0]) < 0) fail(r, key, 'windowMs', windowMs);
    const out: MinuteUnits[] = [];
    for (let i = 1; i + 2 < r.length; i += 3) {
      out.push({ minute: Number(r[i]), own: Number(r[i + 1]), outside: Number(r[i + 2]) });
    }
    return out;
  }

  /** The entries of `key` recorded late and still in its window (lua/late-2.lua). */
  async late(key: string, windowMs: number): Promise<LateSummary> {
    const r = asArray(
      await this.#late.call([this.#internal(key).log, lateKey(key, this.#prefix)], windowMs),
      'late',
    ).map(Number);
    return { units: r[0]!, entries: r[1]!, ...(r[1]! > 0 ? { oldestAt: r[2]! } : {}) };
  }

  async refund(keys: readonly string[], id: string): Promise<number> {
    const ks = this.spendKeys(keys);
    const r = await this.#refund.call(ks, id);
    if (Array.isArray(r)) fail(r, keys[Math.max(0, Number(r[1]) - 1)] ?? keys[0]!);
    return Number(r);
  }

  /** Whether entry `id` is in `key`'s log (a spend stores it in every budget's log or in none). */
  async landed(key: string, id: string): Promise<boolean> {
    return (await this.#client.zscore(this.#internal(key).log, id)) !== null;
  }

  async peek(key: string, windowMs: number): Promise<Snapshot> {
    const ik = this.#internal(key);
    const r = asArray(await this.#peek.call([ik.log, ik.meta], windowMs), 'peek');
    if (Number(r[0]) < 0) fail(r, key, 'windowMs', windowMs);
    const snap: Snapshot = {
      used: Number(r[1]),
      calls: Number(r[2]),
      byTag: Object.create(null),
      now: Number(r[0]),
    };
    if (snap.calls > 0) {
      snap.oldestAt = Number(r[3]);
      snap.newestAt = Number(r[4]);
    }
    const blocked = Number(r[5]);
    if (blocked > 0) {
      snap.blockedUntil = blocked;
      if (r[6]) snap.blockedReason = String(r[6]);
    }
    for (let i = 7; i + 1 < r.length; i += 2) snap.byTag[String(r[i])] = Number(r[i + 1]);
    return snap;
  }

  /** A snapshot of the units and the block only (`PeekRequest.totalsOnly`): no walk of the entries. */
  async used(key: string, windowMs: number): Promise<Snapshot> {
    const ik = this.#internal(key);
    const r = asArray(await this.#used.call([ik.log, ik.meta], windowMs), 'used');
    if (Number(r[0]) < 0) fail(r, key, 'windowMs', windowMs);
    const snap: Snapshot = { used: Number(r[1]), calls: 0, byTag: Object.create(null), now: Number(r[0]) };
    const blocked = Number(r[2]);
    if (blocked > 0) {
      snap.blockedUntil = blocked;
      if (r[3]) snap.blockedReason = String(r[3]);
    }
    return snap;
  }

  async freesUpIn(key: string, windowMs: number, limit: number, amounts: number[]): Promise<number[]> {
    const ik = this.#internal(key);
    const r = asArray(await this.#frees.call([ik.log, ik.meta], windowMs, limit, ...amounts), 'frees');
    if (r.length > 0 && Number(r[0]) < 0) fail(r, key, 'windowMs', windowMs);
    return r.map(Number);
  }

  async block(key: string, untilEpochMs: number, reason: string): Promise<void> {
    const r = await this.#block.call([this.#internal(key).meta], untilEpochMs, reason);
    if (Array.isArray(r)) fail(r, key);
  }

  async unblock(key: string): Promise<void> {
    const r = await this.#unblock.call([this.#internal(key).meta]);
    if (Array.isArray(r)) fail(r, key);
  }

  /**
   * The run history's record (lua/record-run.lua), its keys as given (the history prefixes them):
   * `recorded`, or the run remembered under the id (`KEYS[4]`) with this request, or the id's
   * conflict (`LedgerCode.EntryConflict`) or damage (`LedgerCode.Corrupt`) as a negative code.
   */
  async recordRun(
    keys: readonly string[],
    argv: readonly ScriptArg[],
  ): Promise<{ recorded: true } | { remembered: string } | { code: number }> {
    const r = asArray(await this.#recordRun.call(keys, ...argv), 'record-run');
    const code = Number(r[0]);
    if (code === 1) return { recorded: true };
    if (code === 2) return { remembered: String(r[1]) };
    return { code };
  }
}
