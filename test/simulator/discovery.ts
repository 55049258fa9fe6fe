/**
 * Checks a JSON value against a schema of the vendored YouTube v3 discovery document: no field the
 * document does not name, every field of the JSON type it gives (uint64 / int64 as decimal strings,
 * date-times parseable), and every `kind` the fixed string the document states.
 */
import { recordingJson } from '../upstream/recordings.js';

interface DSchema {
  id?: string;
  type?: string;
  format?: string;
  $ref?: string;
  default?: string;
  description?: string;
  properties?: Record<string, DSchema>;
  items?: DSchema;
  additionalProperties?: DSchema;
}

interface Discovery {
  schemas: Record<string, DSchema>;
  resources: Record<
    string,
    {
      methods: Record<
        string,
        {
          response?: { $ref: string };
          parameters: Record<string, DSchema & { minimum?: string; maximum?: string }>;
        }
      >;
    }
  >;
}

export const discovery = recordingJson<Discovery>('discovery-youtube-v3.json');

/**
 * Fields the real API sends that the discovery document does not list, each seen in a recording
 * in test/fixtures/youtube/ (see its README).
 */
export const UNDOCUMENTED_FIELDS: ReadonlySet<string> = new Set(['SearchResultSnippet.publishTime']);

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function fixedKind(s: DSchema): string | undefined {
  return s.default ?? /fixed string "([^"]+)"/.exec(s.description ?? '')?.[1];
}

function check(value: unknown, schema: DSchema, path: string, owner: string, out: string[]): void {
  if (schema.$ref !== undefined) {
    const ref = discovery.schemas[schema.$ref];
    if (!ref) {
      out.push(`${path}: unknown schema ${schema.$ref}`);
      return;
    }
    check(value, ref, path, schema.$ref, out);
    return;
  }
  switch (schema.type) {
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        out.push(`${path}: expected an object`);
        return;
      }
      for (const [k, v] of Object.entries(value)) {
        const prop = schema.properties?.[k] ?? schema.additionalProperties;
        if (prop === undefined) {
          if (!UNDOCUMENTED_FIELDS.has(`${owner}.${k}`)) out.push(`${path}.${k}: not in ${owner}`);
          continue;
        }
        if (k === 'kind' && schema.properties?.[k] !== undefined) {
          const kind = fixedKind(prop);
          if (kind !== undefined && v !== kind) out.push(`${path}.kind: ${String(v)}, not ${kind}`);
        }
        check(v, prop, `${path}.${k}`, owner, out);
      }
      return;
    }
    case 'array':
      if (!Array.isArray(value)) out.push(`${path}: expected an array`);
      else for (const [i, v] of value.entries()) check(v, schema.items ?? {}, `${path}[${i}]`, owner, out);
      return;
    case 'string': {
      if (typeof value !== 'string') {
        out.push(`${path}: expected a string, got ${typeof value}`);
        return;
      }
      const f = schema.format;
      if (f === 'uint64' && !/^\d+$/.test(value)) out.push(`${path}: not a uint64 string`);
      if (f === 'int64' && !/^-?\d+$/.test(value)) out.push(`${path}: not an int64 string`);
      if ((f === 'date-time' || f === 'google-datetime') && !DATE_TIME.test(value))
        out.push(`${path}: not a date-time`);
      return;
    }
    case 'integer':
      if (!Number.isInteger(value)) out.push(`${path}: expected an integer`);
      else if (schema.format?.startsWith('uint') && (value as number) < 0) out.push(`${path}: negative`);
      return;
    case 'number':
      if (typeof value !== 'number') out.push(`${path}: expected a number`);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') out.push(`${path}: expected a boolean`);
      return;
    default:
      return;
  }
}

/** Problems of `value` as the response of `resource.method` (e.g. 'videos', 'list'); [] when none. */
export function responseProblems(resource: string, method: string, value: unknown): string[] {
  const ref = discovery.resources[resource]?.methods[method]?.response?.$ref;
  if (ref === undefined) return [`${resource}.${method}: no response schema in the discovery document`];
  const out: string[] = [];
  check(value, { $ref: ref }, ref, ref, out);
  return out;
}

/** A method parameter's bounds as the discovery document gives them. */
export function parameterBounds(
  resource: string,
  method: string,
  name: string,
): { min?: number; max?: number } {
  const p = discovery.resources[resource]?.methods[method]?.parameters[name];
  return {
    ...(p?.minimum !== undefined ? { min: Number(p.minimum) } : {}),
    ...(p?.maximum !== undefined ? { max: Number(p.maximum) } : {}),
  };
}
