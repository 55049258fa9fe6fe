/**
 * docs/openapi.yaml as a document: valid OpenAPI 3.1 for @apidevtools/swagger-parser, clean under
 * Redocly's recommended rules (no error, no warning), and describing every route the decision API
 * serves. That every answer the tests see matches it is test/api/openapi.ts's part.
 */
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { createConfig, lint } from '@redocly/openapi-core';
import { expect, it } from 'vitest';
import { API_ROUTES } from '../../src/api/decisions.js';
import { OPENAPI } from './openapi.js';

const DOCUMENT = join(import.meta.dirname, '../../docs/openapi.yaml');

it('is valid OpenAPI for swagger-parser', async () => {
  const api = (await SwaggerParser.validate(DOCUMENT)) as { info: { license: { identifier?: string } } };
  expect(api.info.license.identifier).toBe('MIT');
});

it('passes Redocly’s recommended rules without a warning', async () => {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lint({ ref: DOCUMENT, config });
  expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual(
    [],
  );
});

it('describes every route the decision API serves, and the 408 each may answer', () => {
  expect(Object.keys(OPENAPI.paths).sort()).toEqual([...API_ROUTES.keys()].sort());
  for (const [path, ops] of Object.entries(OPENAPI.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      expect(op.responses['408'], `${method} ${path}`).toEqual({ $ref: '#/components/responses/Timeout' });
    }
  }
});
