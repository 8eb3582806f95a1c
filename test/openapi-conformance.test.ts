import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { createTenant } from './helpers/honeypot.ts';
import { conformanceOf, type Exchange, exchangeOf, type OpenApiConformance, servedConformance } from './helpers/openapi-conformance.ts';

/**
 * The OpenAPI conformance check (test/helpers/openapi-conformance.ts) is not blind: fed real
 * exchanges with one thing broken, it names the break; fed the real ones, it finds nothing.
 */

let t: TestApp;
let conformance: OpenApiConformance;
let listTokens: Exchange;

const JSON_TYPE = 'application/json; charset=utf-8';

beforeAll(async () => {
  t = await startTestApp({ env: { OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '0' } });
  conformance = await servedConformance(t);
  const options = { method: 'GET' as const, url: `${V1}/tokens` };
  listTokens = exchangeOf(options, await t.call(options));
}, 240_000);
afterAll(() => t?.close());

/** The recorded answer to `GET {v1}/tokens` with its body changed by `change`. */
function brokenTokens(change: (body: { tokens: Record<string, unknown>[] } & Record<string, unknown>) => void): Exchange['response'] {
  const body = JSON.parse(listTokens.response.body);
  change(body);
  return { ...listTokens.response, body: JSON.stringify(body) };
}

describe('responses', () => {
  it('finds nothing wrong with a real answer', () => {
    expect(listTokens.response.statusCode).toBe(200);
    expect(JSON.parse(listTokens.response.body).tokens.length).toBeGreaterThan(0);
    expect(conformance.checkExchange(listTokens.request, listTokens.response)).toEqual([]);
  });

  it('names a missing required field and a value of the wrong type', () => {
    const missing = conformance.checkExchange(listTokens.request, brokenTokens((b) => delete b.tokens[0]!.name));
    expect(missing).toHaveLength(1);
    expect(missing[0]).toMatch(/listTokens.*response body outside the 200 schema.*\/tokens\/0 must have required property 'name'/);
    const wrongType = conformance.checkExchange(listTokens.request, brokenTokens((b) => (b.tokens[0]!.scopes = 'read:dashboard')));
    expect(wrongType[0]).toMatch(/\/tokens\/0\/scopes must be array/);
  });

  it('checks formats and constants as JSON Schema 2020-12 says', () => {
    expect(conformance.checkExchange(listTokens.request, brokenTokens((b) => (b.generatedAt = 'yesterday')))[0]).toMatch(/generatedAt must match format "date-time"/);
    expect(conformance.checkExchange(listTokens.request, brokenTokens((b) => (b.schema = 'svc-other.v1')))[0]).toMatch(/\/schema must be equal to constant/);
  });

  it('names an undeclared status, another content type and a body that is not JSON', () => {
    expect(conformance.checkExchange(listTokens.request, { ...listTokens.response, statusCode: 418 })).toEqual([
      expect.stringMatching(/status 418 is not declared/),
    ]);
    expect(conformance.checkExchange(listTokens.request, { ...listTokens.response, headers: { 'content-type': 'text/plain' } })).toEqual([
      expect.stringMatching(/content type text\/plain where the document declares application\/json/),
    ]);
    expect(conformance.checkExchange(listTokens.request, { ...listTokens.response, body: '{"schema":' })).toEqual([expect.stringMatching(/body is not JSON/)]);
  });

  it('describes the index page a browser gets as HTML', async () => {
    const options = { method: 'GET' as const, url: '/', headers: { accept: 'text/html' }, token: null };
    const res = await t.call(options);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const { request, response } = exchangeOf(options, res);
    expect(conformance.checkExchange(request, response)).toEqual([]);
  });

  it('holds an error answer to svc-error.v1', () => {
    const error = { statusCode: 404, headers: { 'content-type': JSON_TYPE }, body: JSON.stringify({ schema: 'svc-error.v1', reason: 'not-found' }) };
    expect(conformance.checkExchange(listTokens.request, error)[0]).toMatch(/outside the 404 schema.*must have required property 'human'/);
  });
});

describe('requests', () => {
  const wrongBody = { method: 'POST', url: `${V1}/tokens`, headers: { 'content-type': 'application/json' }, body: { name: 5, scopes: ['read:dashboard'] } };
  const created = { statusCode: 200, headers: { 'content-type': JSON_TYPE }, body: '{}' };

  it('fails a request outside the document that the service accepted, not one it refused', () => {
    expect(conformance.checkRequest(wrongBody)).toEqual([expect.stringMatching(/createToken.*\/requestBody\/name must be string/)]);
    expect(conformance.checkExchange(wrongBody, created)[0]).toMatch(/request outside the document, accepted: \/requestBody\/name must be string/);
    const refused = { statusCode: 400, headers: { 'content-type': JSON_TYPE }, body: JSON.stringify({ schema: 'svc-error.v1', reason: 'invalid-body', human: 'body.name must be string.' }) };
    expect(conformance.checkExchange(wrongBody, refused)).toEqual([]);
  });

  it('matches the concrete operation by method and path and checks path and query values', () => {
    expect(conformance.checkRequest({ method: 'POST', url: `${V1}/provenance/keys/${'k'.repeat(65)}/retire`, headers: {}, body: {} })[0]).toMatch(
      /retireProvenanceKey.*\/path\/id must NOT have more than 64 characters/,
    );
    expect(conformance.checkRequest({ method: 'GET', url: `${V1}/provenance/keys?limit=many`, headers: {} })[0]).toMatch(/listProvenanceKeys.*\/query\/limit must be integer/);
    expect(conformance.checkRequest({ method: 'GET', url: `${V1}/provenance/keys?limit=20`, headers: {} })).toEqual([]);
  });

  it('fails an answer 2xx to a path the document does not have', () => {
    const request = { method: 'GET', url: `${V1}/no-such-thing`, headers: {} };
    expect(conformance.checkExchange(request, created)).toEqual([expect.stringMatching(/no operation in the document matches/)]);
    expect(conformance.checkExchange(request, { ...created, statusCode: 404 })).toEqual([]);
  });

  it('reads a zero-length body as no body, and {} as the body of a POST that takes no fields', () => {
    const rotate = { method: 'POST', url: `${V1}/honeypot/tenants/edge-eu/rotate-secret`, headers: { 'content-type': 'application/json' }, body: {} };
    expect(conformance.checkRequest(rotate)).toEqual([]);
    expect(conformance.checkRequest({ ...rotate, body: { force: true } })[0]).toMatch(/must NOT have additional properties/);
    expect(conformance.checkRequest({ ...rotate, body: '' })).toEqual(conformance.checkRequest({ ...rotate, headers: {}, body: undefined }));
    expect(conformance.checkRequest({ method: 'POST', url: `${V1}/tokens`, headers: {} })[0]).toMatch(/must have required property 'requestBody'/);
  });
});

describe('the JSON Schema dialect of OpenAPI 3.1', () => {
  it('applies 2020-12 keywords that a draft-07 validator would skip', async () => {
    const document = {
      openapi: '3.1.0',
      info: { title: 'dialect', version: '1' },
      paths: {
        '/thing': {
          get: {
            operationId: 'getThing',
            responses: {
              '200': {
                description: 'ok',
                content: { 'application/json': { schema: { type: 'object', properties: { a: { type: ['string', 'null'] } }, unevaluatedProperties: false } } },
              },
            },
          },
        },
      },
    };
    const check = await conformanceOf(document);
    const request = { method: 'GET', url: '/thing', headers: {} };
    const answer = (body: unknown) => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(check.checkExchange(request, answer({ a: null }))).toEqual([]);
    expect(check.checkExchange(request, answer({ a: 'x', b: 1 }))[0]).toMatch(/must NOT have unevaluated properties/);
  });
});

/**
 * Disagreements the first replay found, each fixed where it belonged (registry.ts declares 413 and
 * 429, openapi.ts requires a body only when it has a required field, server.ts refuses undeclared
 * query keys on {v1}): each exchange now conforms.
 */
describe('former disagreements between the service and its document', () => {
  it('declares 413 on endpoints that take a body, which the service answers above its body limit', async () => {
    const options = { method: 'POST' as const, url: `${V1}/tokens`, payload: { name: 'x'.repeat(1_100_000), scopes: ['read:dashboard'] } };
    const res = await t.call(options);
    expect(res.statusCode).toBe(413);
    const { request, response } = exchangeOf(options, res);
    expect(conformance.checkExchange(request, response)).toEqual([]);
  });

  it('declares 429 on endpoints behind the failed-authentication limit', async () => {
    const limited = await t.secondInstance({ OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '1' });
    const options = { method: 'GET' as const, url: `${V1}/tokens`, headers: { authorization: 'Bearer svctok_notarealtokennotarealtokennotarealtoken0' } };
    let res = await limited.server.inject(options);
    for (let i = 0; i < 3 && res.statusCode !== 429; i++) res = await limited.server.inject(options);
    expect(res.statusCode).toBe(429);
    const { request, response } = exchangeOf(options, res);
    expect(conformance.checkExchange(request, response)).toEqual([]);
  }, 240_000);

  it('does not require a body on POSTs that take no required field, which the service answers 200 without one', async () => {
    await createTenant(t, 'no-body');
    const options = { method: 'POST' as const, url: `${V1}/honeypot/tenants/no-body/rotate-secret` };
    const res = await t.call(options);
    expect(res.statusCode).toBe(200);
    const { request, response } = exchangeOf(options, res);
    expect(conformance.checkExchange(request, response)).toEqual([]);
  });

  it('refuses a query key the document does not declare on the operator API, naming it', async () => {
    const options = { method: 'GET' as const, url: `${V1}/tokens`, query: { limt: '5' } };
    const res = await t.call(options);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ reason: 'invalid-query', field: 'query.limt' });
    const { request, response } = exchangeOf(options, res);
    expect(conformance.checkExchange(request, response)).toEqual([]);
    // The validator agrees the request is outside the document.
    expect(conformance.checkRequest(request).length).toBeGreaterThan(0);
  });
});
