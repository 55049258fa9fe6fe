/**
 * The only module that knows the Lua scripts: it reads them from `lua/` (inlining `@include`
 * lines), registers them on a connection with ioredis `defineCommand` (calls go by SHA and fall back
 * to EVAL when the server's script cache was flushed), builds every KEYS/ARGV array, and turns
 * script replies (negative codes included) into values and errors. No other file calls them.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Cluster, Redis } from 'ioredis';
import { QuotaGuardError } from '../errors.js';
import type { BackendSpend } from './backend.js';
import { ledgerFailure } from './codes.js';
import type { Decision, Snapshot } from './types.js';

/** `lua/` next to `src/` and `dist/` alike. */
export const LUA_DIR = fileURLToPath(new URL('../../lua/', import.meta.url));

export interface LoadedScript {
  /** File name without `.lua`, e.g. `peek-2`. */
  file: string;
  /** Command name registered on the connection, e.g. `qgPeek`. */
  command: string;
  /** From the file name (`name-<keys>.lua`); undefined when the caller passes the key count. */
  numberOfKeys?: number;
  /** The script as sent to Redis, includes inlined. */
  lua: string;
  /** SHA1 of `lua`: what SCRIPT LOAD answers and what EVALSHA uses. */
  sha: string;
}

/** `--- @include "name"` on a line of its own, at any indentation: replaced by lua/includes/name.lua. */
const INCLUDE = /^[ \t]*--- @include "([\w-]+)"[ \t]*$/gm;

function inline(source: string, dir: string, depth = 0): string {
  if (depth > 8) throw new Error(`lua includes nested too deep in ${dir}`);
  return source.replace(INCLUDE, (_line, name: string) =>
    inline(readFileSync(`${dir}includes/${name}.lua`, 'utf8'), dir, depth + 1).trimEnd(),
  );
}

function commandName(base: string): string {
  return `qg${base.replace(/(^|-)(\w)/g, (_m, _d, c: string) => c.toUpperCase())}`;
}

/** Every script in `lua/`, ready to register. */
export function loadScripts(dir = LUA_DIR): LoadedScript[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.lua'))
    .sort()
    .map((f) => {
      const file = f.slice(0, -'.lua'.length);
      const m = /^(.*?)(?:-(\d+))?$/.exec(file)!;
      const lua = inline(readFileSync(`${dir}${f}`, 'utf8'), dir);
      const s: LoadedScript = {
        file,
        command: commandName(m[1]!),
        lua,
        sha: createHash('sha1').update(lua).digest('hex'),
      };
      if (m[2] !== undefined) s.numberOfKeys = Number(m[2]);
      return s;
    });
}

let cached: LoadedScript[] | undefined;

type ScriptReply = number | string | Array<number | string | null>;
type ScriptFn = (...args: Array<string | number | Array<string | number>>) => Promise<ScriptReply>;
interface LedgerCommands {
  qgSpend: ScriptFn;
  qgRefund: ScriptFn;
  qgPeek: ScriptFn;
  qgFrees: ScriptFn;
  qgBlock: ScriptFn;
  qgUnblock: ScriptFn;
}

/** Register the ledger scripts on a connection (once per connection object). */
export function registerScripts(client: Redis | Cluster, keyPrefix = ''): LedgerScripts {
  cached ??= loadScripts();
  for (const s of cached) {
    client.defineCommand(s.command, {
      lua: s.lua,
      ...(s.numberOfKeys !== undefined && { numberOfKeys: s.numberOfKeys }),
    });
  }
  return new LedgerScripts(client as unknown as LedgerCommands, keyPrefix);
}

/** Internal keys of a budget key: K with a `{tag}` gets suffixes, any other K is wrapped as `{K}`. */
export function internalKeys(key: string, prefix = ''): { log: string; meta: string } {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  const base = close > open + 1 ? key : `{${key}}`;
  return { log: `${prefix}${base}:log`, meta: `${prefix}${base}:meta` };
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

/** Typed calls of the registered scripts. */
export class LedgerScripts {
  readonly #c: LedgerCommands;
  readonly #prefix: string;
  readonly #keyCache = new Map<string, { log: string; meta: string }>();

  constructor(client: LedgerCommands, prefix = '') {
    this.#c = client;
    this.#prefix = prefix;
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
  spend(req: BackendSpend, onError: (e: unknown) => never): Promise<Decision> {
    const n = req.budgets.length;
    // numkeys, KEYS (log, meta per budget), then ARGV: id, cost, (limit, window) per budget.
    const args: Array<string | number> = new Array(1 + 4 * n + 2);
    const budgetKeys: string[] = new Array(n);
    args[0] = 2 * n;
    args[2 * n + 1] = req.id;
    args[2 * n + 2] = req.cost;
    for (let i = 0; i < n; i++) {
      const b = req.budgets[i]!;
      const ik = this.#internal(b.key);
      args[1 + 2 * i] = ik.log;
      args[2 + 2 * i] = ik.meta;
      args[2 * n + 3 + 2 * i] = b.limit;
      args[2 * n + 4 + 2 * i] = b.windowMs;
      budgetKeys[i] = b.key;
    }
    return this.#c.qgSpend(args).then((reply) => this.#decision(req, budgetKeys, reply), onError);
  }

  #decision(req: BackendSpend, budgetKeys: string[], reply: ScriptReply): Decision {
    const r = asArray(reply, 'spend');
    const code = Number(r[0]);
    if (code === 1) {
      return {
        allowed: true,
        retryAfterMs: 0,
        remaining: Number(r[1]),
        id: req.id,
        keys: budgetKeys,
        cost: req.cost,
        at: Number(r[2]),
      };
    }
    if (code === 0) {
      const blockedUntil = Number(r[4]);
      const d: Decision = {
        allowed: false,
        retryAfterMs: Number(r[1]),
        remaining: Number(r[2]),
        limitedBy: budgetKeys[Number(r[3]) - 1]!,
        keys: budgetKeys,
        cost: req.cost,
        at: Number(r[5]),
      };
      if (blockedUntil > 0) d.blockedUntil = blockedUntil;
      return d;
    }
    const i = Number(r[1]) - 1;
    const b = req.budgets[i] ?? req.budgets[0]!;
    fail([r[0] ?? null, r[2] ?? null], b.key, `budgets[${Math.max(0, i)}].windowMs`, b.windowMs);
  }

  async refund(keys: readonly string[], id: string): Promise<number> {
    const ks = this.spendKeys(keys);
    const r = await this.#c.qgRefund(ks.length, ...ks, id);
    if (Array.isArray(r)) fail(r, keys[Math.max(0, Number(r[1]) - 1)] ?? keys[0]!);
    return Number(r);
  }

  async peek(key: string, windowMs: number): Promise<Snapshot> {
    const ik = this.#internal(key);
    const r = asArray(await this.#c.qgPeek(ik.log, ik.meta, windowMs), 'peek');
    if (Number(r[0]) < 0) fail(r, key, 'windowMs', windowMs);
    const snap: Snapshot = { used: Number(r[1]), calls: Number(r[2]), byTag: {}, now: Number(r[0]) };
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

  async freesUpIn(key: string, windowMs: number, limit: number, amounts: number[]): Promise<number[]> {
    const ik = this.#internal(key);
    const r = asArray(await this.#c.qgFrees(ik.log, ik.meta, windowMs, limit, ...amounts), 'frees');
    if (r.length > 0 && Number(r[0]) < 0) fail(r, key, 'windowMs', windowMs);
    return r.map(Number);
  }

  async block(key: string, untilEpochMs: number, reason: string): Promise<void> {
    const r = await this.#c.qgBlock(this.#internal(key).meta, untilEpochMs, reason);
    if (Array.isArray(r)) fail(r, key);
  }

  async unblock(key: string): Promise<void> {
    const r = await this.#c.qgUnblock(this.#internal(key).meta);
    if (Array.isArray(r)) fail(r, key);
  }
}
