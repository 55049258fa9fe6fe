/**
 * Config problems: the list a resolution collects (one line each, with its path and code), and the
 * zod schema's issues turned into the same lines.
 */
import type { z } from 'zod';
import type { ErrorCode } from '../errors.js';

export class Problems {
  readonly list: Array<{ text: string; code: ErrorCode }> = [];
  #seen = new Set<string>();
  add(path: string, message: string, code: ErrorCode = 'QG_CONFIG_INVALID'): void {
    const text = path ? `${path}: ${message}` : message;
    if (this.#seen.has(text)) return;
    this.#seen.add(text);
    this.list.push({ text, code });
  }
  /** One code for the whole error: the shared one, or QG_CONFIG_INVALID when they differ. */
  code(): ErrorCode {
    const codes = new Set(this.list.map((p) => p.code));
    return codes.size === 1 ? [...codes][0]! : 'QG_CONFIG_INVALID';
  }
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

export function formatIssue(issue: z.core.$ZodIssue): string[] {
  const path = formatPath(issue.path);
  const at = (p: string, msg: string) => (p ? `${p}: ${msg}` : msg);
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((k) => at(formatPath([...issue.path, k]), 'unknown key'));
    case 'invalid_type':
      return [
        at(
          path,
          /received undefined$/.test(issue.message) ? 'is required' : `must be ${article(issue.expected)}`,
        ),
      ];
    case 'too_small':
      return [
        at(
          path,
          issue.origin === 'array'
            ? `must have at least ${issue.minimum} item(s)`
            : issue.origin === 'string'
              ? 'must not be empty'
              : `must be ${issue.inclusive ? '>=' : '>'} ${issue.minimum}`,
        ),
      ];
    case 'too_big':
      return [
        at(
          path,
          issue.origin === 'string'
            ? `must be at most ${issue.maximum} characters`
            : `must be <= ${issue.maximum}`,
        ),
      ];
    case 'invalid_value':
      return [at(path, `must be one of ${issue.values.map((v) => String(v)).join(', ')}`)];
    case 'invalid_union': {
      // Our unions are "number or string" inputs: report the first branch's message.
      const inner = issue.errors.flat()[0];
      return [at(path, inner && inner.code !== 'invalid_type' ? inner.message : 'has the wrong type')];
    }
    default:
      return [at(path, issue.message)];
  }
}

function article(type: string): string {
  if (type === 'int') return 'an integer';
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
