import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { servedOpenApiDocument } from '../scripts/served-openapi.ts';
import { documentFor, TOOLSET_CLIENT_PATHS, TOOLSET_CLIENT_SCHEMA_FILE, toolsetClientTypes } from '../scripts/toolset-client-api.ts';

/**
 * The toolset client's committed types are what the service's registry generates now: an endpoint
 * it calls that changes fails here (regenerate with `npm run generate-api -w
 * @observatory/toolset-client`, then fix what no longer type-checks), so the client cannot
 * silently disagree with the service.
 */
describe('the toolset client types', () => {
  it('match the ones generated from the served OpenAPI document', async () => {
    const served = await servedOpenApiDocument();
    expect(await toolsetClientTypes(served)).toBe(readFileSync(TOOLSET_CLIENT_SCHEMA_FILE, 'utf8'));
  }, 120_000);

  it('are cut to the paths the client calls, with the components they refer to', () => {
    const document = {
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: { '/a': { post: { responses: { 400: { $ref: '#/components/responses/Bad' } } } }, '/b': { get: { responses: { 200: { $ref: '#/components/responses/Unused' } } } } },
      components: {
        responses: { Bad: { content: { 'application/json': { schema: { $ref: '#/components/schemas/error' } } } }, Unused: {} },
        schemas: { error: { type: 'object' }, other: { type: 'string' } },
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
      },
    };
    const cut = documentFor(document, ['/a']);
    expect(Object.keys(cut.paths as object)).toEqual(['/a']);
    expect(cut.components).toEqual({ responses: { Bad: document.components.responses.Bad }, schemas: { error: { type: 'object' } }, securitySchemes: document.components.securitySchemes });
    expect(() => documentFor(document, ['/missing'])).toThrow(/no path/);
    expect(TOOLSET_CLIENT_PATHS).toContain('/api/observatory/empire/ingest');
  });
});
