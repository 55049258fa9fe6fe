/**
 * Names a user writes (credentials, buckets, methods, profiles, budgets, call sites) are data, never
 * keys into a prototype: every table keyed by them is a null-prototype object, every lookup asks
 * for an own property, so `constructor`, `__proto__` or `toString` is an unknown name like any
 * other. And the nearest known name for one that is not known ("did you mean"), by edit distance:
 * fastest-levenshtein, a small dependency-free package that does only that, rather than a distance
 * function of our own.
 */
import { distance } from 'fastest-levenshtein';

/** A table keyed by names: no prototype, so only what was put in it is in it. */
export function nameTable<T>(entries: Iterable<readonly [string, T]> = []): Record<string, T> {
  const table = Object.create(null) as Record<string, T>;
  for (const [name, value] of entries) table[name] = value;
  return table;
}

/** The entry of `table` named `name`, or undefined (never an inherited property). */
export function byName<T>(table: Readonly<Record<string, T>>, name: string): T | undefined {
  return typeof name === 'string' && Object.hasOwn(table, name) ? table[name] : undefined;
}

/**
 * The known name nearest to `name`, when one is near enough and no other is as near: the same name
 * in other case, else at most a third of its letters changed (at least one).
 */
export function nearestName(name: string, known: Iterable<string>): string | undefined {
  if (typeof name !== 'string' || name === '') return undefined;
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  let tie = false;
  for (const k of known) {
    if (k === name) continue;
    const d = k.toLowerCase() === lower ? 0 : distance(lower, k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
      tie = false;
    } else if (d === bestDistance) tie = true;
  }
  const limit = Math.max(1, Math.floor(name.length / 3));
  return best !== undefined && bestDistance <= limit && (!tie || bestDistance === 0) ? best : undefined;
}

/** ` (did you mean 'x'?)`, or `` when nothing known is near. */
export function didYouMean(name: string, known: Iterable<string>): string {
  const near = nearestName(name, known);
  return near === undefined ? '' : ` (did you mean '${near}'?)`;
}

/** `a, b, c`, or `none`; at most `max` names, then `… (n more)`. */
export function nameList(names: Iterable<string>, max = 12): string {
  const all = [...names];
  if (all.length === 0) return 'none';
  const shown = all.slice(0, max).join(', ');
  return all.length > max ? `${shown}, … (${all.length - max} more)` : shown;
}
