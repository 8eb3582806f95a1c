import { Writable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/platform/clock.ts';
import { conflict, ServiceError } from '../src/platform/errors.ts';
import { renderError } from '../src/platform/http/errors.ts';
import { defineEndpoint } from '../src/platform/http/registry.ts';
import { buildServer } from '../src/platform/http/server.ts';
import { createMetrics } from '../src/platform/metrics.ts';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const createToken = (payload: string, contentType = 'application/json') =>
  t.call({ method: 'POST', url: `${V1}/tokens`, payload, headers: { 'content-type': contentType } });

describe('400 for bad input, naming what is wrong', () => {
  it('names a body field that fails validation', async () => {
    const res = await createToken(JSON.stringify({ name: '', scopes: ['read:dashboard'] }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-body', field: 'body.name' });
    expect(res.json().human).toContain('body.name');
  });

  it('names a missing required field', async () => {
    const res = await createToken(JSON.stringify({ name: 'x' }));
    expect(res.json()).toMatchObject({ reason: 'invalid-body', field: 'body.scopes', human: 'body.scopes is required.' });
  });

  it('names a bad array member', async () => {
    const res = await createToken(JSON.stringify({ name: 'x', scopes: ['read:dashboard', 'root:everything'] }));
    expect(res.statusCode).toBe(400);
    expect(res.json().field).toBe('body.scopes[1]');
  });

  it('names a query parameter out of range', async () => {
    const res = await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?limit=0` });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-query', field: 'query.limit' });
  });

  it('names a bad path parameter', async () => {
    const res = await t.call({ method: 'POST', url: `${V1}/tokens/not-a-uuid/revoke` });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ reason: 'invalid-params', field: 'path.id' });
  });

  it('refuses malformed JSON', async () => {
    const res = await createToken('{"name": "x", ');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'malformed-json' });
  });

  it('refuses JSON with a __proto__ key', async () => {
    const res = await createToken('{"name":"x","scopes":["read:dashboard"],"__proto__":{"admin":true}}');
    expect(res.statusCode).toBe(400);
    expect(res.json().schema).toBe('svc-error.v1');
  });

  it('refuses a string or key holding U+0000 (PostgreSQL cannot store it) with 400 naming the field, and accepts an escaped backslash', async () => {
    const nul = await createToken('{"name":"x\\u0000y","scopes":["read:dashboard"]}');
    expect(nul.statusCode).toBe(400);
    expect(nul.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-body', field: 'body.name' });
    const nested = await createToken('{"name":"x","scopes":["read:dashboard","a\\u0000"]}');
    expect(nested.json()).toMatchObject({ reason: 'invalid-body', field: 'body.scopes[1]' });
    // The six characters \u0000 (an escaped backslash, then "u0000") are ordinary text.
    const literal = await createToken('{"name":"x\\\\u0000y","scopes":["read:dashboard"]}');
    expect(literal.statusCode, literal.body).toBe(200);
    expect(literal.json().name).toBe('x\\u0000y');
  });

  it('refuses a query or path value holding U+0000 with 400 naming it, before any database read', async () => {
    const inQuery = await t.call({ method: 'GET', url: `${V1}/empire/some-lab/dashboard?tenant=a%00b` });
    expect(inQuery.statusCode).toBe(400);
    expect(inQuery.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-query', field: 'query.tenant' });
    const inNotes = await t.call({ method: 'GET', url: `${V1}/empire/notes?eventId=%00` });
    expect(inNotes.json()).toMatchObject({ reason: 'invalid-query', field: 'query.eventId' });
    const inPath = await t.call({ method: 'GET', url: `${V1}/empire/lineage/a%00b` });
    expect(inPath.statusCode).toBe(400);
    expect(inPath.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-params', field: 'path.eventId' });
    // %2500 is the text "%00", not a NUL.
    expect((await t.call({ method: 'GET', url: `${V1}/empire/notes?eventId=%2500` })).statusCode).toBe(200);
  });

  it('refuses a body that is not JSON', async () => {
    const res = await createToken('name=x', 'text/plain');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-content-type' });
  });

  it('treats an empty JSON body as no fields', async () => {
    const res = await createToken('');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ reason: 'invalid-body' });
  });
});

describe('other statuses', () => {
  it('answers 413 for a body over 1 MiB', async () => {
    const res = await createToken(JSON.stringify({ name: 'x'.repeat(1024 * 1024), scopes: ['read:dashboard'] }));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'payload-too-large' });
  });

  it('answers 404 for an unknown route, with or without a credential', async () => {
    for (const token of [undefined, null]) {
      const res = await t.call({ method: 'GET', url: `${V1}/no-such-thing?x=1`, token });
      expect(res.statusCode).toBe(404);
      const { generatedAt, ...rest } = res.json();
      expect(rest).toEqual({ schema: 'svc-error.v1', reason: 'not-found', human: `There is no endpoint GET ${V1}/no-such-thing.` });
      expect(Date.parse(generatedAt)).not.toBeNaN();
    }
  });

  it('answers 404 for an unknown id', async () => {
    const res = await t.call({ method: 'POST', url: `${V1}/tokens/00000000-0000-4000-8000-000000000000/revoke` });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
  });

  it('renders 409 and 429 with their reasons and Retry-After data', () => {
    expect(renderError(conflict('slug taken'), 'r1')).toMatchObject({ status: 409, body: { schema: 'svc-error.v1', reason: 'conflict', human: 'slug taken' } });
    const limited = renderError(new ServiceError(429, 'rate-limited', 'slow down', { retryAfterSec: 7 }), 'r2');
    expect(limited).toMatchObject({ status: 429, body: { reason: 'rate-limited', retryAfterSec: 7 } });
  });

  it('carries a request id on every response', async () => {
    const res = await t.call({ method: 'GET', url: '/healthz' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('500: logged with a request id, nothing internal leaked', () => {
  it('hides the failure and logs it under the id the response carries', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const server = buildServer({
      endpoints: [
        defineEndpoint({
          id: 'explode',
          title: 'Explode',
          description: 'Fails on purpose for this test.',
          method: 'GET',
          path: '/explode',
          auth: 'none',
          scope: null,
          tag: 'test',
          kind: 'read',
          response: { schemaId: 'svc-test.v1', fields: { ok: Type.Boolean() } },
          example: { schema: 'svc-test.v1', generatedAt: '2026-01-01T00:00:00.000Z', ok: true },
          handler: async () => {
            throw new Error('password=hunter2 at db.internal:5432');
          },
        }),
      ],
      credentials: { fromBearer: async () => null, fromSession: async () => null },
      clock: systemClock,
      metrics: createMetrics(() => ({ total: 0, idle: 0, waiting: 0 })),
      metricsToken: null,
      logger: pino({ level: 'error' }, sink),
      trustProxy: false,
    });
    const res = await server.inject({ method: 'GET', url: '/explode' });
    await server.close();
    expect(res.statusCode).toBe(500);
    const body = res.json();
    expect(body).toMatchObject({ schema: 'svc-error.v1', reason: 'internal' });
    expect(res.body).not.toContain('hunter2');
    expect(res.body).not.toContain('db.internal');
    expect(body.requestId).toBe(res.headers['x-request-id']);
    expect(body.human).toContain(body.requestId);
    const logged = lines.map((l) => JSON.parse(l) as { requestId?: string; err?: { message: string } });
    expect(logged.some((l) => l.requestId === body.requestId && l.err?.message.includes('hunter2'))).toBe(true);
  });
});

describe('503 when the database is unreachable', () => {
  it('refuses reads, writes and readiness with unavailable, and stays alive', async () => {
    const own = await startTestApp();
    try {
      expect((await own.call({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      await own.app.database.close();
      for (const request of [
        { method: 'GET' as const, url: `${V1}/tokens` },
        { method: 'POST' as const, url: `${V1}/tokens`, payload: { name: 'x', scopes: ['read:dashboard'] } },
        { method: 'GET' as const, url: '/readyz' },
      ]) {
        const res = await own.call(request);
        expect(res.statusCode, request.url).toBe(503);
        expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'unavailable' });
      }
      expect((await own.call({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await own.close();
    }
  });
});
