/**
 * Config problems: the list one reading of a config collects (one line each, with its path and
 * code), and what keeps a mistake from causing more lines than itself. The parts of the file the
 * schema refused are taken out before the rest is resolved (lenient.ts); a problem found at, under
 * or just above a part taken out is one its absence caused, and is not reported. Names whose
 * definition was refused (a credential, a profile, a budget) are known but broken: a reference to
 * one is not "unknown", and what depends on it is not checked.
 */
import type { ErrorCode } from '../errors.js';

/** Where in the config file: `['credentials', 0, 'buckets', 'search.list', 'reserve']`. */
export type Path = ReadonlyArray<string | number>;

/** The kinds of names a config defines and refers to. */
export type NameKind = 'credential' | 'profile' | 'budget' | 'region';

export class Problems {
  readonly list: Array<{ text: string; code: ErrorCode }> = [];
  readonly #seen = new Set<string>();
  readonly #removed: Path[] = [];
  readonly #broken = new Map<NameKind, Set<string>>();

  /**
   * One problem at `path` (a path in the file, or already words, such as `REDIS_URL`): dropped when
   * a part the schema refused explains it, or when the same line was said already.
   */
  add(path: Path | string, message: string, code: ErrorCode = 'QG_CONFIG_INVALID'): void {
    if (typeof path !== 'string' && this.#shadowed(path)) return;
    const where = typeof path === 'string' ? path : formatPath(path);
    const text = where ? `${where}: ${message}` : message;
    if (this.#seen.has(text)) return;
    this.#seen.add(text);
    this.list.push({ text, code });
  }

  /** A part of the file the schema refused, taken out before resolving. */
  removed(path: Path): void {
    this.#removed.push(path);
  }

  /** A name whose definition was refused (`*`: every name of the kind). */
  markBroken(kind: NameKind, name: string): void {
    const set = this.#broken.get(kind) ?? new Set<string>();
    this.#broken.set(kind, set);
    set.add(name);
  }

  /** Whether `name` was defined but refused: references to it say nothing more. */
  isBroken(kind: NameKind, name: string | undefined): boolean {
    const set = this.#broken.get(kind);
    return set !== undefined && (set.has('*') || (name !== undefined && set.has(name)));
  }

  /** One code for the whole error: the shared one, or QG_CONFIG_INVALID when they differ. */
  code(): ErrorCode {
    const codes = new Set(this.list.map((p) => p.code));
    return codes.size === 1 ? [...codes][0]! : 'QG_CONFIG_INVALID';
  }

  /** At or under a part taken out, or its parent within an entry (`budgets[0]` of `budgets[0].methods`). */
  #shadowed(path: Path): boolean {
    return this.#removed.some(
      (r) => startsWith(path, r) || (path.length >= 2 && path.length === r.length - 1 && startsWith(r, path)),
    );
  }
}

function startsWith(path: Path, prefix: Path): boolean {
  return prefix.length <= path.length && prefix.every((seg, i) => path[i] === seg);
}

/** `credentials[0].buckets["search.list"].reserve` */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && /^[A-Za-z_$][\w$]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}
