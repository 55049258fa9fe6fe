/**
 * A request's body, read and parsed before a route sees it: at most MAX_BODY_BYTES, sent as
 * `application/json` (a web page cannot send that type to another origin without a CORS preflight,
 * which the API never grants unless an origin is configured), and strict JSON with no key twice in
 * an object — `JSON.parse` keeps the last of two, so `{"cost": 1, "cost": 500}` would mean what a
 * proxy or a log that keeps the first does not. Duplicates are found with Momoa, an ECMA-404 parser
 * that keeps every member of an object in its syntax tree (ESLint's JSON support is built on it);
 * the value itself is JSON.parse's, which defines a `__proto__` key as an ordinary property.
 */
import type { IncomingMessage } from 'node:http';
import { type ObjectNode, parse as parseTree, traverse } from '@humanwhocodes/momoa';
import { InvalidArgumentError } from '../errors.js';

/** Largest request body accepted (bytes); a spend is about 150. */
export const MAX_BODY_BYTES = 8 * 1024;

/** A request refused before it reached the guard: an HTTP status and a code of its own. */
export class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

function tooLarge(): HttpFailure {
  return new HttpFailure(413, 'too_large', `the body is over ${MAX_BODY_BYTES} bytes`);
}

/** `application/json`, with at most a `charset=utf-8` parameter; anything else is a 415. */
export function checkJsonType(req: IncomingMessage): void {
  const header = req.headers['content-type'] ?? '';
  const [type, ...params] = header.split(';').map((p) => p.trim().toLowerCase());
  const charsetOk = params.every((p) => p === '' || /^charset="?utf-8"?$/.test(p));
  if (type !== 'application/json' || !charsetOk) {
    throw new HttpFailure(
      415,
      'unsupported_media_type',
      `the body must be sent as Content-Type: application/json${header ? ` (got '${header.slice(0, 60)}')` : ''}`,
    );
  }
}

/** The body's text; over the limit is a 413 (declared or counted). */
export function readText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES) {
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        failed = true;
        reject(tooLarge());
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', () => {
      failed = true;
      reject(new HttpFailure(400, 'aborted', 'the request was not received whole'));
    });
  });
}

/** Keys of every object in a parsed JSON value. */
function keyCount(v: unknown): number {
  if (typeof v !== 'object' || v === null) return 0;
  let n = 0;
  for (const x of Array.isArray(v) ? v : Object.values(v)) n += keyCount(x);
  return n + (Array.isArray(v) ? 0 : Object.keys(v).length);
}

/**
 * Strict JSON with no key twice in one object, as a value; otherwise a 400. Every member name ends
 * with a quote followed by a colon, so the text has at least as many of those as it has members;
 * when it has exactly as many as the parsed value has keys, no key was lost to a duplicate and the
 * syntax tree is not needed (a spend's body, in about a tenth of the time).
 */
export function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpFailure(400, 'malformed_json', 'the body is not JSON');
  }
  if ((text.match(/"\s*:/g)?.length ?? 0) === keyCount(value)) return value;
  let tree: ReturnType<typeof parseTree>;
  try {
    tree = parseTree(text, { mode: 'json', ranges: false, tokens: false });
  } catch {
    throw new HttpFailure(400, 'malformed_json', 'the body is not JSON');
  }
  traverse(tree, {
    enter(node) {
      if (node.type !== 'Object') return;
      const seen = new Set<string>();
      for (const m of (node as ObjectNode).members) {
        const key = m.name.type === 'String' ? m.name.value : m.name.name;
        if (seen.has(key)) throw new InvalidArgumentError(key, 'appears twice in the body');
        seen.add(key);
      }
    },
  });
  return value;
}

/** A POST's body: its type checked, read, parsed. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  checkJsonType(req);
  return parseJson(await readText(req));
}
