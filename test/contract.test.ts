import { validate } from '@readme/openapi-parser';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainSchema } from '../src/platform/http/openapi.ts';
import { type Endpoint, SCOPES, toFastifyPath } from '../src/platform/http/registry.ts';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { exchangeOf, recordExchanges, servedConformance } from './helpers/openapi-conformance.ts';

/**
 * The registry contract. It walks every endpoint the app declares, so endpoints added by later
 * domains are covered without touching this file.
 */
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

let t: TestApp;
let traffic: ReturnType<typeof recordExchanges>;
let endpoints: readonly Endpoint[];
/** For each scope, a token holding every scope but that one. */
const tokenWithout = new Map<string, string>();

beforeAll(async () => {
  // This file probes a 401 and a 403 on every endpoint on purpose: no failure limit here.
  t = await startTestApp({ env: { OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '0' } });
  endpoints = t.app.endpoints;
  // Every request of this file is checked against the served OpenAPI document at the end.
  traffic = recordExchanges(t);
  for (const scope of SCOPES) tokenWithout.set(scope, await t.tokenWith(SCOPES.filter((s) => s !== scope)));
}, 240_000); // booting an app and its fixtures is slow on a shared machine
afterAll(() => t?.close());

/**
 * The only v1 endpoints a caller reaches without a credential: the passkey login ceremony, which is
 * how a credential (a session) is obtained in the first place (spec C item 9 leaves it open).
 */
const PUBLIC_V1 = new Set(['startPasskeyLogin', 'finishPasskeyLogin']);

const samplePath = (path: string) => path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');

/** Each required query parameter without a default set to the first of its schema's `examples`, which it must have. */
function requiredQuery(e: Endpoint): Record<string, string> {
  const schema = e.query as { required?: string[]; properties?: Record<string, { examples?: unknown[]; default?: unknown }> } | null;
  const query: Record<string, string> = {};
  for (const name of schema?.required ?? []) {
    if (schema?.properties?.[name]?.default !== undefined) continue;
    const example = schema?.properties?.[name]?.examples?.[0];
    if (example === undefined) throw new Error(`${e.id}: required query parameter ${name} needs an example in its schema`);
    query[name] = String(example);
  }
  return query;
}

describe('endpoint registry', () => {
  it('declares each id and each (method, path) once', () => {
    const ids = endpoints.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    const routes = endpoints.map((e) => `${e.method} ${e.path}`);
    expect(new Set(routes).size).toBe(routes.length);
  });

  it('has a route for every entry and an entry for every route', () => {
    const served = t.app.server.registeredRoutes.map((r) => `${r.method} ${r.url}`).sort();
    const declared = endpoints.map((e) => `${e.method} ${toFastifyPath(e.path)}`).sort();
    expect(served).toEqual(declared);
  });

  it('gives every entry the fields the manifest needs', () => {
    for (const e of endpoints) {
      expect(e.title.length, e.id).toBeGreaterThan(0);
      expect(e.description.length, e.id).toBeGreaterThan(10);
      expect(e.tag.length, e.id).toBeGreaterThan(0);
      expect(['read', 'write'], e.id).toContain(e.kind);
      expect(e.id, 'ids are verb-first camelCase').toMatch(/^[a-z]+[A-Za-z0-9]*$/);
      if (e.auth === 'none') expect(e.scope, e.id).toBeNull();
      // A signed-link endpoint takes the link the service signed (made by a session-or-bearer call) as its credential.
      if (e.path.startsWith(V1) && !PUBLIC_V1.has(e.id)) {
        expect(['session-or-bearer', 'signed-url'], `${e.id}: every v1 endpoint takes a session or a bearer token, or a signed link`).toContain(e.auth);
      }
      if (e.auth === 'signed-url') expect(e.scope, `${e.id}: a signed link carries no scope`).toBeNull();
    }
  });

  it('has examples that satisfy their own response schemas', () => {
    const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    for (const e of endpoints) {
      if (e.contentType !== 'application/json') continue;
      const check = ajv.compile(plainSchema(e.responseSchema) as object);
      expect(check(e.example), `${e.id}: ${JSON.stringify(check.errors)}`).toBe(true);
    }
  });
});

describe('documents derived from the registry', () => {
  it('serves a manifest listing every endpoint with its scope and schemas', async () => {
    const res = await t.call({ method: 'GET', url: `${V1}/manifest` });
    expect(res.statusCode).toBe(200);
    const manifest = res.json();
    expect(manifest.schema).toBe('svc-observatory-manifest.v1');
    expect(Date.parse(manifest.generatedAt)).not.toBeNaN();
    expect(manifest.baseUrl).toBe('http://localhost:8080');
    expect(manifest.scopes).toEqual([...SCOPES]);
    expect(manifest.endpoints.map((e: { id: string }) => e.id).sort()).toEqual(endpoints.map((e) => e.id).sort());
    const createToken = manifest.endpoints.find((e: { id: string }) => e.id === 'createToken');
    expect(createToken).toMatchObject({ method: 'POST', path: `${V1}/tokens`, scope: 'write:tokens', kind: 'write', auth: 'session-or-bearer' });
    expect(createToken.bodySchema.required).toEqual(['name', 'scopes']);
    expect(createToken.responseSchema.properties.token.type).toBe('string');
  });

  it('serves an OpenAPI 3.1 document that an independent validator accepts', async () => {
    const res = await t.call({ method: 'GET', url: `${V1}/openapi.json` });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.bridgeToken).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Observatory-Bridge' });
    // The bridge token is declared exactly on the operations that accept it.
    const bridged = Object.values(doc.paths as Record<string, Record<string, { operationId: string; security?: Record<string, unknown>[] }>>)
      .flatMap((p) => Object.values(p))
      .filter((op) => op.security?.some((s) => 'bridgeToken' in s))
      .map((op) => op.operationId);
    expect(bridged.sort()).toEqual(endpoints.filter((e) => e.bridge).map((e) => e.id).sort());
    expect(bridged.length).toBeGreaterThan(0);
    expect(doc.components.schemas['svc-error.v1'].required).toEqual(['schema', 'reason', 'human']);
    const result = await validate(structuredClone(doc));
    expect(result.valid, JSON.stringify(result)).toBe(true);
    const operations = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((p) =>
      Object.values(p).map((op) => op.operationId),
    );
    expect(operations.sort()).toEqual(endpoints.map((e) => e.id).sort());
    expect(doc.paths[`${V1}/tokens`].post.responses['403']).toEqual({ $ref: '#/components/responses/Forbidden' });
  });
});

describe('authentication on every endpoint', () => {
  it('answers 401 svc-error without a credential and with a bad one', async () => {
    const guarded = endpoints.filter((e) => e.auth !== 'none');
    expect(guarded.length).toBeGreaterThan(5);
    for (const e of guarded) {
      // The public agent API takes anonymous calls; only a bad key is refused.
      const tokens = e.auth === 'agent-key' ? ['svctok_notarealtokennotarealtokennotarealtoken0'] : [null, 'svctok_notarealtokennotarealtokennotarealtoken0'];
      for (const token of tokens) {
        const res = await t.call({ method: e.method, url: samplePath(e.path), token, ...(e.body ? { payload: {} } : {}) });
        expect(res.statusCode, `${e.id} with ${token ?? 'no token'}`).toBe(401);
        expect(res.json().schema).toBe('svc-error.v1');
        // Signed endpoints and links say which part of the signature failed; the rest say unauthorized.
        const reasons =
          e.auth === 'tenant-signature' ? ['unknown-tenant', 'bad-signature'] : e.auth === 'signed-url' ? ['bad-signature'] : e.auth === 'agent-key' ? ['invalid-api-key'] : ['unauthorized'];
        expect(reasons, e.id).toContain(res.json().reason);
      }
    }
  });

  it('answers 403 svc-error to a token without the endpoint scope', async () => {
    const scoped = endpoints.filter((e) => e.scope !== null || e.auth === 'metrics');
    expect(scoped.length).toBeGreaterThan(3);
    for (const e of scoped) {
      const scope = e.scope ?? 'read:dashboard';
      const res = await t.call({
        method: e.method,
        url: samplePath(e.path),
        token: tokenWithout.get(scope) ?? null,
        ...(e.body ? { payload: {} } : {}),
      });
      expect(res.statusCode, e.id).toBe(403);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'forbidden' });
      expect(res.json().human).toContain(scope);
    }
  });

  it('lets a token that holds only the scope through the auth check', async () => {
    for (const e of endpoints.filter((x) => x.scope !== null && x.method === 'GET' && !x.path.includes('{'))) {
      const token = await t.tokenWith([e.scope!]);
      const res = await t.call({ method: 'GET', url: e.path, query: requiredQuery(e), token });
      expect(res.statusCode, e.id).toBe(200);
      expect(res.json().schema, e.id).toBe(e.schemaId);
    }
  });
});

describe('the OpenAPI document agrees with the service (issue 14 item 9)', () => {
  it('refuses hostile requests with 4xx, as the document refuses them', async () => {
    const conformance = await servedConformance(t);
    const hostile = [
      { method: 'POST', url: `${V1}/tokens`, payload: { name: 5, scopes: ['read:dashboard'] } },
      { method: 'POST', url: `${V1}/tokens`, payload: { name: 'no-scopes' } },
      { method: 'POST', url: `${V1}/tokens`, payload: { name: 'scopes-as-text', scopes: 'read:dashboard' } },
      { method: 'POST', url: `${V1}/tokens`, payload: [{ name: 'an-array' }] },
      { method: 'POST', url: `${V1}/provenance/keys`, payload: { toolset: 'crawler-lab' } },
      { method: 'POST', url: `${V1}/honeypot/tenants/edge-eu/rotate-secret`, payload: { unexpected: true } },
      { method: 'POST', url: `${V1}/provenance/keys/${'k'.repeat(65)}/retire`, payload: {} },
      { method: 'GET', url: `${V1}/honeypot/investigate`, query: { tenant: 'edge-eu' } },
      { method: 'GET', url: `${V1}/provenance/keys`, query: { limit: 'many' } },
      { method: 'GET', url: `${V1}/provenance/keys`, query: { limit: '0' } },
      { method: 'GET', url: `${V1}/provenance/keys`, query: { status: 'sleeping' } },
    ] as const;
    const disagreements: string[] = [];
    for (const options of hostile) {
      const res = await t.call(options as never);
      const { request } = exchangeOf(options as never, res);
      const documentSays = conformance.checkRequest(request);
      if (res.statusCode < 400 || res.statusCode > 499) disagreements.push(`${request.method} ${request.url}: the service answered ${res.statusCode} ${res.body.slice(0, 200)}`);
      if (documentSays.length === 0) disagreements.push(`${request.method} ${request.url}: the document allows it, the service answered ${res.statusCode} ${res.body.slice(0, 200)}`);
    }
    expect(disagreements).toEqual([]);
  });

  it('describes every request sent above and every answer to it', async () => {
    expect(traffic.exchanges.length).toBeGreaterThan(endpoints.length * 2);
    const violations = await traffic.violations();
    expect(violations, `exchanges the served OpenAPI document does not describe:\n${violations.join('\n')}`).toEqual([]);
  }, 180_000);
});
