/**
 * The OpenAPI document (docs/openapi.yaml) as zod schemas, built from the document itself, and a
 * checker that every answer a test sees is one the document describes for its route and status.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';

type Schema = Record<string, unknown>;

export const OPENAPI = YAML.parse(
  readFileSync(join(import.meta.dirname, '../../docs/openapi.yaml'), 'utf8'),
) as {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, Schema>; requestBody?: Schema }>>;
  components: { schemas: Record<string, Schema>; responses: Record<string, Schema> };
};

function deref(s: Schema): Schema {
  const ref = s['$ref'];
  if (typeof ref !== 'string') return s;
  const [, , kind, name] = ref.split('/');
  return deref((OPENAPI.components as unknown as Record<string, Record<string, Schema>>)[kind!]![name!]!);
}

/** A JSON Schema (the subset the document uses) as a zod schema. */
export function toZod(input: Schema): z.ZodType {
  const s = deref(input);
  if (Array.isArray(s['oneOf'])) {
    const [a, b, ...rest] = (s['oneOf'] as Schema[]).map(toZod);
    return z.union([a!, b!, ...rest]);
  }
  switch (s['type']) {
    case 'object': {
      const props = (s['properties'] ?? {}) as Record<string, Schema>;
      const required = new Set((s['required'] ?? []) as string[]);
      const shape: Record<string, z.ZodType> = {};
      for (const [k, v] of Object.entries(props)) shape[k] = required.has(k) ? toZod(v) : toZod(v).optional();
      const o = z.object(shape);
      return s['additionalProperties'] === false ? o.strict() : o.loose();
    }
    case 'array':
      return z.array(s['items'] ? toZod(s['items'] as Schema) : z.unknown());
    case 'string': {
      if (Array.isArray(s['enum'])) return z.enum(s['enum'] as [string, ...string[]]);
      let t = z.string();
      if (typeof s['pattern'] === 'string') t = t.regex(new RegExp(s['pattern'], 'u'));
      if (typeof s['maxLength'] === 'number') t = t.max(s['maxLength']);
      if (s['format'] === 'date-time') t = t.refine((v) => !Number.isNaN(Date.parse(v)), 'a date-time');
      return t;
    }
    case 'integer': {
      let t = z.number().int();
      if (typeof s['minimum'] === 'number') t = t.min(s['minimum']);
      return t;
    }
    case 'boolean':
      return z.boolean();
    default:
      throw new Error(`openapi.yaml: a schema this checker does not know: ${JSON.stringify(s)}`);
  }
}

/** The schema of an answer `status` to `method path`; throws when the document has none. */
export function answerSchema(method: string, path: string, status: number): z.ZodType {
  const op = OPENAPI.paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`openapi.yaml has no ${method} ${path}`);
  const r = op.responses[String(status)];
  if (!r) throw new Error(`openapi.yaml has no ${status} answer for ${method} ${path}`);
  const content = (deref(r)['content'] as Record<string, { schema: Schema }>)['application/json'];
  return toZod(content!.schema);
}

/** The (route, status) pairs seen; each answer checked against the document as it arrives. */
export const seen = new Set<string>();

export function checkAnswer(method: string, path: string, status: number, body: unknown): void {
  // A method or path the document does not have is refused with its Error answer (404, 405).
  const described = OPENAPI.paths[path]?.[method.toLowerCase()] !== undefined;
  if (!described && (status === 404 || status === 405)) {
    const e = toZod(OPENAPI.components.schemas['Error']!).safeParse(body);
    if (!e.success)
      throw new Error(`${method} ${path} ${status}: not the document's Error: ${e.error.message}`);
    return;
  }
  const parsed = answerSchema(method, path, status).safeParse(body);
  if (!parsed.success) {
    throw new Error(
      `${method} ${path} ${status}: the answer is not what openapi.yaml says: ${parsed.error.message}\n${JSON.stringify(body)}`,
    );
  }
  seen.add(`${method} ${path} ${status}`);
}
