/**
 * The route table's body schemas (src/api/requests.ts, zod) and docs/openapi.yaml say the same:
 * every route the table serves is in the document with its method, and each request body has the
 * same fields, the same required ones, no others, and the same type, pattern, enum and bounds per
 * field. A field changed in one and not the other fails here. And the body's JSON is strict, with
 * no key twice.
 */
import { expect, it } from 'vitest';
import { toJSONSchema } from 'zod/v4/core';
import { parseJson } from '../../src/api/body.js';
import { ROUTES } from '../../src/api/routes.js';
import { OPENAPI } from './openapi.js';

type Schema = Record<string, unknown>;

function deref(s: Schema): Schema {
  const ref = s['$ref'];
  if (typeof ref !== 'string') return s;
  const name = ref.split('/').pop()!;
  return deref(OPENAPI.components.schemas[name]!);
}

/** What a field must be, in the terms both sides share (descriptions and safe-integer bounds aside). */
function constraints(input: Schema): Schema {
  const s = deref(input);
  const alternatives = (s['oneOf'] ?? s['anyOf']) as Schema[] | undefined;
  if (alternatives)
    return {
      anyOf: alternatives.map(constraints).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    };
  const out: Schema = { type: s['type'] };
  if (Array.isArray(s['enum'])) out['enum'] = [...(s['enum'] as string[])].sort();
  if (s['format'] !== undefined) out['format'] = s['format'];
  // A date-time's pattern is zod's way of checking the format the document names.
  else if (s['pattern'] !== undefined) out['pattern'] = s['pattern'];
  if (s['minimum'] !== undefined) out['minimum'] = s['minimum'];
  if (s['maxLength'] !== undefined) out['maxLength'] = s['maxLength'];
  if (s['maximum'] !== undefined && s['maximum'] !== Number.MAX_SAFE_INTEGER) out['maximum'] = s['maximum'];
  return out;
}

function body(s: Schema): { required: string[]; additional: unknown; fields: Record<string, Schema> } {
  const d = deref(s);
  const props = (d['properties'] ?? {}) as Record<string, Schema>;
  return {
    required: [...((d['required'] ?? []) as string[])].sort(),
    additional: d['additionalProperties'],
    fields: Object.fromEntries(Object.entries(props).map(([k, v]) => [k, constraints(v)])),
  };
}

it('serves the routes the document describes, with their methods', () => {
  const served = [...ROUTES].map(([path, r]) => `${r.method} ${path}`).sort();
  const described = Object.entries(OPENAPI.paths)
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
  expect(served).toEqual(described);
});

it('checks each request body against the schema the document gives it', () => {
  for (const [path, route] of ROUTES) {
    const op = OPENAPI.paths[path]![route.method.toLowerCase()]!;
    const documented = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)
      ?.content;
    if (!route.schema) {
      expect(documented, `${path} takes no body`).toBeUndefined();
      continue;
    }
    expect(Object.keys(documented ?? {}), path).toEqual(['application/json']);
    const ours = body(toJSONSchema(route.schema) as Schema);
    const theirs = body(documented!['application/json']!.schema);
    expect(ours.additional, path).toBe(false);
    expect(theirs.additional, path).toBe(false);
    expect(ours.required, path).toEqual(theirs.required);
    expect(ours.fields, path).toEqual(theirs.fields);
  }
});

it('parses strict JSON and refuses a key twice in any object, however the text is spaced', () => {
  const refused = (text: string) => {
    try {
      parseJson(text);
      return undefined;
    } catch (e) {
      return (e as { field?: string; code?: string }).field ?? (e as { code?: string }).code;
    }
  };
  expect(refused('{"cost":1,"cost":500}')).toBe('cost');
  expect(refused('{"a" :1, "b": {"c":1,"c" : 3}}')).toBe('c');
  expect(refused('{"a":[{"b":1},{"b":2,"b":3}]}')).toBe('b');
  expect(refused('{"\\u0063ost":1,"cost":2}')).toBe('cost');
  expect(refused('{"a":1,}')).toBe('malformed_json');
  expect(refused("{'a':1}")).toBe('malformed_json');
  // A quote and a colon inside a string are not a key: the syntax tree says so.
  expect(parseJson('{"tag":"x\\":y","a":1}')).toEqual({ tag: 'x":y', a: 1 });
  expect(Object.hasOwn(parseJson('{"__proto__":{"cost":500}}') as object, '__proto__')).toBe(true);
});
