import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Endpoint } from '../../platform/http/registry.ts';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { prefersHtml } from './endpoints.ts';

const VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const LINKS = [`${V1}/manifest`, `${V1}/openapi.json`, '/healthz', '/readyz', '/api/openapi.json', '/.well-known/agent-api'];
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

let t: TestApp;
let endpoints: readonly Endpoint[];

beforeAll(async () => {
  // A low failure limit, to show the index stays open to an address that is over it.
  t = await startTestApp({ env: { OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '2' } });
  endpoints = t.app.endpoints;
});
afterAll(() => t.close());

describe('GET /', () => {
  it('answers JSON svc-observatory-index.v1 with name, version and links, without a credential', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'application/json, text/html']) {
      const res = await t.call({ method: 'GET', url: '/', token: null, headers: accept === undefined ? {} : { accept } });
      expect(res.statusCode, accept).toBe(200);
      expect(res.headers['content-type'], accept).toMatch(/^application\/json/);
      expect(res.headers.vary, accept).toMatch(/accept/i);
      const body = res.json();
      expect(body).toMatchObject({ schema: 'svc-observatory-index.v1', name: 'Observatory', version: VERSION, baseUrl: 'http://localhost:8080' });
      expect(Date.parse(body.generatedAt)).not.toBeNaN();
      expect(body.links.map((l: { href: string }) => l.href)).toEqual(LINKS);
    }
  });

  it('answers an HTML page with the same links to a browser', async () => {
    for (const accept of [BROWSER_ACCEPT, 'text/html', 'text/*']) {
      const res = await t.call({ method: 'GET', url: '/', token: null, headers: { accept } });
      expect(res.statusCode, accept).toBe(200);
      expect(res.headers['content-type'], accept).toBe('text/html; charset=utf-8');
      expect(res.headers.vary, accept).toMatch(/accept/i);
      expect(res.headers['x-request-id'], accept).toBeTruthy();
      expect(res.body).toMatch(/^<!doctype html>/);
      expect(res.body).toContain(`<h1>Observatory <small>${VERSION}</small></h1>`);
      for (const href of LINKS) expect(res.body).toContain(`<a href="${href}">`);
    }
    const head = await t.call({ method: 'HEAD', url: '/', token: null, headers: { accept: BROWSER_ACCEPT } });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('is a read without auth that the failure limit leaves open, like /healthz', async () => {
    const index = endpoints.find((e) => e.path === '/' && e.method === 'GET')!;
    expect(index).toMatchObject({ id: 'getIndex', auth: 'none', scope: null, kind: 'read' });
    // One address fails authentication past the limit (the other tests call from the default address).
    const flooder = { token: null, remoteAddress: '203.0.113.9' };
    for (let i = 0; i < 3; i++) await t.call({ method: 'GET', url: `${V1}/manifest`, ...flooder });
    expect((await t.call({ method: 'GET', url: `${V1}/manifest`, ...flooder })).statusCode).toBe(429);
    expect((await t.call({ method: 'GET', url: '/', ...flooder })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: '/', ...flooder, headers: { accept: BROWSER_ACCEPT } })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: '/healthz', ...flooder })).statusCode).toBe(200);
  });

  it('weighs Accept ranges by specificity and q', () => {
    expect(prefersHtml(BROWSER_ACCEPT)).toBe(true);
    expect(prefersHtml('text/html')).toBe(true);
    expect(prefersHtml('application/json;q=0.5, text/html')).toBe(true);
    expect(prefersHtml(undefined)).toBe(false);
    expect(prefersHtml('*/*')).toBe(false);
    expect(prefersHtml('application/json')).toBe(false);
    expect(prefersHtml('text/html;q=0.5, application/json')).toBe(false);
    expect(prefersHtml('text/html;q=0, */*')).toBe(false);
    expect(prefersHtml('application/*, text/html;q=0.9')).toBe(false);
  });
});

describe('the OpenAPI document agrees with the service', () => {
  type Operation = { operationId: string; parameters: { name: string; in: string; required: boolean; schema: { default?: unknown } }[]; requestBody?: { required?: boolean; content?: unknown } };
  let operations: Map<string, Operation>;
  beforeAll(async () => {
    const doc = (await t.call({ method: 'GET', url: `${V1}/openapi.json` })).json() as { paths: Record<string, Record<string, Operation>> };
    operations = new Map(Object.values(doc.paths).flatMap((p) => Object.values(p).map((op) => [op.operationId, op] as const)));
  });

  it('never calls a query parameter with a default required, in the document or the manifest', async () => {
    let defaulted = 0;
    for (const e of endpoints) {
      for (const p of operations.get(e.id)!.parameters.filter((x) => x.in === 'query')) {
        if (p.schema.default === undefined) continue;
        defaulted++;
        expect(p.required, `${e.id} ${p.name}`).toBe(false);
      }
    }
    expect(defaulted).toBeGreaterThan(10);
    const limitOf = (id: string) => operations.get(id)!.parameters.find((p) => p.name === 'limit')!;
    for (const id of ['replayHoneypotEvent', 'listOperatorAudit']) expect(limitOf(id)).toMatchObject({ in: 'query', required: false, schema: { default: expect.any(Number) } });

    const manifest = (await t.call({ method: 'GET', url: `${V1}/manifest` })).json() as {
      endpoints: { id: string; querySchema: { required?: string[]; properties: Record<string, { default?: unknown }> } | null }[];
    };
    for (const e of manifest.endpoints) {
      for (const name of e.querySchema?.required ?? []) expect(e.querySchema!.properties[name]!.default, `${e.id} ${name}`).toBeUndefined();
    }
  });

  it('gives every POST a body declaration and a requestBody', () => {
    const posts = endpoints.filter((e) => e.method === 'POST');
    expect(posts.length).toBeGreaterThan(20);
    for (const e of posts) {
      expect(e.body, `${e.id} declares no body`).not.toBeNull();
      expect(operations.get(e.id)!.requestBody, e.id).toMatchObject({ required: expect.any(Boolean), content: { 'application/json': { schema: expect.any(Object) } } });
    }
    // Required exactly when the body has a required field: a body of optional fields may be left out.
    expect(operations.get('createToken')!.requestBody?.required).toBe(true);
    expect(operations.get('registerProvenanceKey')!.requestBody?.required).toBe(true);
    for (const id of ['rotateTenantSecret', 'disableTenant', 'enableTenant']) expect(operations.get(id)!.requestBody?.required, id).toBe(false);
  });

  it('takes {} or no body on the tenant calls that have no fields, and refuses unknown fields', async () => {
    const created = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload: { slug: 'empty-body', name: 'Empty body' } });
    expect(created.statusCode).toBe(200);
    for (const action of ['rotate-secret', 'disable', 'enable']) {
      const url = `${V1}/honeypot/tenants/empty-body/${action}`;
      expect((await t.call({ method: 'POST', url, payload: {} })).statusCode, `${action} {}`).toBe(200);
      expect((await t.call({ method: 'POST', url })).statusCode, `${action} no body`).toBe(200);
      expect((await t.call({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '' })).statusCode, `${action} empty JSON`).toBe(200);
      const extra = await t.call({ method: 'POST', url, payload: { force: true } });
      expect(extra.statusCode, `${action} extra field`).toBe(400);
      expect(extra.json().reason).toBe('invalid-body');
    }
    const op = operations.get('rotateTenantSecret')!;
    expect(op.requestBody).toMatchObject({ content: { 'application/json': { schema: { type: 'object', additionalProperties: false, properties: {} } } } });
  });
});
