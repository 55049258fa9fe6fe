/**
 * Every schema mistake in one pass, and the rest of the file still resolved. The schema's issues
 * are reported (with "did you mean" for an unknown key or a value outside a list); then the parts
 * it refused are taken out of a copy and the copy is parsed again, until it passes:
 *
 * - a refused key is deleted, so its default stands in (and nothing under it is reported again);
 * - a refused element of a top-level list (`credentials[1]`, `regions[3]`) is left out, and the
 *   resolved list keeps a hole at its index, so every other element keeps its own index in messages;
 * - what only the deletion made wrong (a required key now missing) takes out the part above it.
 *
 * Each part taken out is told to `Problems`, which drops the lines it would cause downstream.
 */
import type * as z from 'zod/mini';
import { didYouMean, nameList } from './names.js';
import type { Path, Problems } from './problems.js';

/** A parsed top-level list with holes where the schema refused an element. */
export type Holey<T> = ReadonlyArray<T | undefined>;

type Issue = z.core.$ZodIssue;
type Obj = Record<PropertyKey, unknown>;

/** Rounds of taking parts out before giving up (each round takes out at least one). */
const MAX_ROUNDS = 12;

export interface LenientResult<T> {
  /** What the schema returned for the file with the refused parts taken out; undefined if nothing could be saved. */
  data: T | undefined;
  /** Top-level list → indices of the elements left out. */
  holes: ReadonlyMap<string, ReadonlySet<number>>;
  /** The raw elements left out of top-level lists (for the names they defined). */
  dropped: ReadonlyArray<{ list: string; index: number; raw: unknown }>;
  /** Every part taken out (original indices). */
  removed: readonly Path[];
}

/**
 * Parse `raw` with `schema`; report every issue of the first pass to `problems` and resolve what
 * can be saved. With no issue, `data` is the parse and there are no holes.
 */
export function parseLeniently<T>(
  schema: z.ZodMiniType<T>,
  raw: unknown,
  problems: Problems,
): LenientResult<T> {
  const first = schema.safeParse(raw, { jitless: true, reportInput: true });
  if (first.success) return { data: first.data, holes: new Map(), dropped: [], removed: [] };
  for (const issue of first.error.issues) {
    for (const line of formatIssue(issue, schema)) problems.add(line.path, line.message);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { data: undefined, holes: new Map(), dropped: [], removed: [] };
  }
  const removed: Path[] = [];
  const work = structuredClone(raw) as Obj;
  const holes = new Map<string, Set<number>>();
  const dropped: Array<{ list: string; index: number; raw: unknown }> = [];
  let issues = first.error.issues;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const { view, original } = withoutHoles(work, holes);
    if (round > 0) {
      const again = schema.safeParse(view, { jitless: true });
      if (again.success) return { data: fillHoles(again.data, holes), holes, dropped, removed };
      issues = again.error.issues;
    }
    let progress = false;
    for (const issue of issues) {
      const paths =
        issue.code === 'unrecognized_keys' ? issue.keys.map((k) => [...issue.path, k]) : [issue.path];
      for (const p of paths) {
        const path = toOriginal(p, original);
        // After the first round an issue is one a removal caused: take out the part above it.
        const target = round === 0 ? path : path.slice(0, -1);
        if (target.length === 0) return { data: undefined, holes, dropped, removed };
        if (takeOut(work, target, holes, dropped)) {
          problems.removed(target);
          removed.push(target);
          progress = true;
        }
      }
    }
    if (!progress) break;
  }
  const { view } = withoutHoles(work, holes);
  const last = schema.safeParse(view, { jitless: true });
  return { data: last.success ? fillHoles(last.data, holes) : undefined, holes, dropped, removed };
}

/** Take the part at `path` out of `work`: a key deleted, or a top-level element left out. */
function takeOut(
  work: Obj,
  path: Path,
  holes: Map<string, Set<number>>,
  dropped: Array<{ list: string; index: number; raw: unknown }>,
): boolean {
  // An element: of a top-level list, a hole; deeper, the list itself goes.
  const firstIndex = path.findIndex((seg) => typeof seg === 'number');
  if (firstIndex === 1) {
    const list = path[0] as string;
    const index = path[1] as number;
    if (path.length === 2) {
      const set = holes.get(list) ?? new Set<number>();
      holes.set(list, set);
      if (set.has(index)) return false;
      set.add(index);
      dropped.push({ list, index, raw: (work[list] as unknown[] | undefined)?.[index] });
      return true;
    }
  }
  let target = path;
  if (typeof target.at(-1) === 'number')
    target = target.slice(0, target.findLastIndex((s) => typeof s !== 'number') + 1);
  if (target.length === 0) return false;
  let at: unknown = work;
  for (const seg of target.slice(0, -1)) at = (at as Obj | undefined)?.[seg];
  const key = target.at(-1)!;
  if (typeof at !== 'object' || at === null || !Object.hasOwn(at, key)) return false;
  delete (at as Obj)[key];
  return true;
}

/** `work` with the holes left out of its top-level lists, and each kept element's original index. */
function withoutHoles(
  work: Obj,
  holes: ReadonlyMap<string, ReadonlySet<number>>,
): { view: Obj; original: Map<string, number[]> } {
  const view: Obj = { ...work };
  const original = new Map<string, number[]>();
  for (const [list, set] of holes) {
    const items = work[list];
    if (!Array.isArray(items)) continue;
    const kept: number[] = [];
    view[list] = items.filter((_, i) => {
      if (set.has(i)) return false;
      kept.push(i);
      return true;
    });
    original.set(list, kept);
  }
  return { view, original };
}

function toOriginal(path: ReadonlyArray<PropertyKey>, original: Map<string, number[]>): Path {
  const out = path.map((s) => (typeof s === 'symbol' ? String(s) : s));
  const map = typeof out[0] === 'string' ? original.get(out[0]) : undefined;
  if (map && typeof out[1] === 'number') out[1] = map[out[1]] ?? out[1];
  return out;
}

/** The parse with each top-level list back at its original length, `undefined` at its holes. */
function fillHoles<T>(data: T, holes: ReadonlyMap<string, ReadonlySet<number>>): T {
  const out = { ...(data as Obj) };
  for (const [list, set] of holes) {
    const kept = out[list];
    if (!Array.isArray(kept)) continue;
    const full: unknown[] = [];
    let k = 0;
    for (let i = 0; k < kept.length || set.has(i); i++) full.push(set.has(i) ? undefined : kept[k++]);
    out[list] = full;
  }
  return out as T;
}

/** The keys an object schema knows at `path` (through lists, records, defaults and pipes). */
export function knownKeys(schema: z.core.$ZodType, path: ReadonlyArray<PropertyKey>): string[] {
  let s: z.core.$ZodType | undefined = schema;
  for (let i = 0; ; ) {
    s = unwrap(s);
    if (!s) return [];
    let def = s._zod.def as unknown as Record<string, unknown> & { type: string };
    if (def.type === 'union') {
      // "A string or an object": the object's keys.
      const object = (def['options'] as z.core.$ZodType[])
        .map(unwrap)
        .find((o) => o?._zod.def.type === 'object');
      if (!object) return [];
      s = object;
      def = s._zod.def as unknown as Record<string, unknown> & { type: string };
    }
    if (i === path.length) return def.type === 'object' ? Object.keys(def['shape'] as object) : [];
    const seg = path[i++];
    if (def.type === 'object') s = (def['shape'] as Record<PropertyKey, z.core.$ZodType>)[seg as string];
    else if (def.type === 'array') s = def['element'] as z.core.$ZodType;
    else if (def.type === 'record') s = def['valueType'] as z.core.$ZodType;
    else return [];
  }
}

/** Through optional, default, prefault and pipe (its input side) to the schema that checks shape. */
function unwrap(s: z.core.$ZodType | undefined): z.core.$ZodType | undefined {
  for (let n = 0; s && n < 10; n++) {
    const def = s._zod.def as unknown as Record<string, unknown> & { type: string };
    if (
      def.type === 'optional' ||
      def.type === 'default' ||
      def.type === 'prefault' ||
      def.type === 'nullable'
    )
      s = def['innerType'] as z.core.$ZodType;
    else if (def.type === 'pipe') s = def['in'] as z.core.$ZodType;
    else return s;
  }
  return s;
}

/** A schema issue as problem lines: where, and what was expected (with the nearest known name). */
export function formatIssue(issue: Issue, schema: z.core.$ZodType): Array<{ path: Path; message: string }> {
  const path = issue.path.map((s) => (typeof s === 'symbol' ? String(s) : s));
  const one = (message: string) => [{ path, message }];
  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = knownKeys(schema, issue.path);
      return issue.keys.map((k) => {
        const near = didYouMean(k, known);
        return {
          path: [...path, k],
          message: near ? `unknown key${near}` : `unknown key (expected ${nameList(known, 30)})`,
        };
      });
    }
    case 'invalid_type':
      return one(
        /received undefined$/.test(issue.message) ? 'is required' : `must be ${article(issue.expected)}`,
      );
    case 'too_small':
      return one(
        issue.origin === 'array'
          ? `must have at least ${issue.minimum} item(s)`
          : issue.origin === 'string'
            ? 'must not be empty'
            : `must be ${issue.inclusive ? '>=' : '>'} ${issue.minimum}`,
      );
    case 'too_big':
      return one(
        issue.origin === 'string'
          ? `must be at most ${issue.maximum} characters`
          : `must be <= ${issue.maximum}`,
      );
    case 'invalid_value': {
      const values = issue.values.map((v) => String(v));
      const given = valueAt(issue);
      return one(
        `must be one of ${values.join(', ')}${typeof given === 'string' ? `, got '${given}'${didYouMean(given, values)}` : ''}`,
      );
    }
    case 'invalid_union': {
      // Our unions are "number or string" inputs: report the first branch's message.
      const inner = issue.errors.flat()[0];
      return one(inner && inner.code !== 'invalid_type' ? inner.message : 'has the wrong type');
    }
    default:
      return one(issue.message);
  }
}

/** The refused value an issue carries (zod keeps it as `input`). */
function valueAt(issue: Issue): unknown {
  return (issue as { input?: unknown }).input;
}

function article(type: string): string {
  if (type === 'int') return 'an integer';
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
