import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { Type } from '@sinclair/typebox';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, REQUEST_LIMIT_DEFAULTS, type RequestLimits } from '../src/platform/config.ts';
import { defineEndpoint } from '../src/platform/http/registry.ts';
import { BODY_LIMIT_BYTES, clientErrorRefusal } from '../src/platform/http/server.ts';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { buildBareServer } from './helpers/bare-server.ts';
import { EMPIRE_INGEST } from './helpers/empire.ts';
import { createTenant, INGEST_PATH, signedIngest } from './helpers/honeypot.ts';

/**
 * Issue 14, item 6: every request is bounded in time, header size, body size, and (for the
 * ingests) in how many are worked on at once; each refusal is svc-error.v1. The mechanisms are
 * shown on a server built from a few test endpoints whose handlers wait until the test lets them
 * go (no sleeping); the wiring from the environment to the real endpoints on the full app.
 */

interface Gate {
  opened: Promise<void>;
  open(): void;
}
function gate(): Gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** The handlers of a test server wait here until `releaseAll`. */
function waitingRoom() {
  let pending: Gate[] = [];
  return {
    wait() {
      const g = gate();
      pending.push(g);
      return g.opened;
    },
    releaseAll() {
      for (const g of pending) g.open();
      pending = [];
    },
  };
}

const ok = { schemaId: 'svc-test.v1', fields: { ok: Type.Boolean() } };
const example = { schema: 'svc-test.v1', generatedAt: '2026-01-01T00:00:00.000Z', ok: true };
const common = { description: 'For this test.', auth: 'none' as const, scope: null, tag: 'test', response: ok, example };

function buildLimitedServer(limits: Partial<RequestLimits>, room: ReturnType<typeof waitingRoom>): FastifyInstance {
  return buildBareServer(
    [
      defineEndpoint({ ...common, id: 'slow', title: 'Slow', method: 'GET', path: '/slow', kind: 'read', handler: async () => (await room.wait(), { ok: true }) }),
      defineEndpoint({ ...common, id: 'fast', title: 'Fast', method: 'GET', path: '/fast', kind: 'read', handler: async () => ({ ok: true }) }),
      defineEndpoint({ ...common, id: 'long', title: 'Long by nature', method: 'GET', path: '/long', kind: 'read', timeoutMs: 900, handler: async () => (await room.wait(), { ok: true }) }),
      defineEndpoint({
        ...common,
        id: 'work',
        title: 'Work under a slot',
        method: 'POST',
        path: '/work',
        kind: 'write',
        concurrency: 'ingest',
        body: Type.Object({ fail: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
        handler: async ({ body }) => {
          await room.wait();
          if (body.fail) throw new Error('the work failed');
          return { ok: true };
        },
      }),
      defineEndpoint({
        ...common,
        id: 'graph',
        title: 'Work under a graph-query slot',
        method: 'POST',
        path: '/graph',
        kind: 'read',
        concurrency: 'graph-query',
        body: Type.Object({}, { additionalProperties: false }),
        handler: async () => (await room.wait(), { ok: true }),
      }),
      defineEndpoint({
        ...common,
        id: 'small',
        title: 'Small body',
        method: 'POST',
        path: '/small',
        kind: 'write',
        bodyLimit: 1024,
        body: Type.Object({ text: Type.String() }),
        handler: async () => ({ ok: true }),
      }),
      defineEndpoint({
        ...common,
        id: 'roomy',
        title: 'Default body limit',
        method: 'POST',
        path: '/roomy',
        kind: 'write',
        body: Type.Object({ text: Type.String() }),
        handler: async () => ({ ok: true }),
      }),
    ],
    { limits },
  );
}

async function listen(server: FastifyInstance): Promise<string> {
  return server.listen({ port: 0, host: '127.0.0.1' });
}

/** Sends raw bytes and collects everything the server writes until it closes the connection. */
function rawExchange(address: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(address);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('utf8')));
    socket.on('close', () => resolve(received));
    socket.on('error', (error) => (received === '' ? reject(error) : resolve(received)));
  });
}

function jsonBodyOf(rawResponse: string): Record<string, unknown> {
  return JSON.parse(rawResponse.slice(rawResponse.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
}

describe('configuration', () => {
  it('has sane defaults', () => {
    expect(loadConfig({}).requestLimits).toEqual({ timeoutMs: 30_000, receiveTimeoutMs: 30_000, maxHeaderBytes: 16_384, ingestConcurrency: 64, graphQueryConcurrency: 4, modelCallConcurrency: 2 });
    expect(loadConfig({}).requestLimits).toEqual(REQUEST_LIMIT_DEFAULTS);
  });

  it('reads every variable', () => {
    const limits = loadConfig({
      OBSERVATORY_REQUEST_TIMEOUT_MS: '5000',
      OBSERVATORY_RECEIVE_TIMEOUT_MS: '10000',
      OBSERVATORY_MAX_HEADER_BYTES: '8192',
      OBSERVATORY_INGEST_CONCURRENCY: '8',
      OBSERVATORY_GRAPH_QUERY_CONCURRENCY: '2',
      OBSERVATORY_MODEL_CALL_CONCURRENCY: '3',
    }).requestLimits;
    expect(limits).toEqual({ timeoutMs: 5000, receiveTimeoutMs: 10_000, maxHeaderBytes: 8192, ingestConcurrency: 8, graphQueryConcurrency: 2, modelCallConcurrency: 3 });
  });

  it.each([
    ['OBSERVATORY_REQUEST_TIMEOUT_MS', '0'],
    ['OBSERVATORY_REQUEST_TIMEOUT_MS', '30s'],
    ['OBSERVATORY_RECEIVE_TIMEOUT_MS', '999'],
    ['OBSERVATORY_MAX_HEADER_BYTES', '512'],
    ['OBSERVATORY_MAX_HEADER_BYTES', '1048576'],
    ['OBSERVATORY_INGEST_CONCURRENCY', '0'],
    ['OBSERVATORY_INGEST_CONCURRENCY', '-1'],
    ['OBSERVATORY_GRAPH_QUERY_CONCURRENCY', '0'],
    ['OBSERVATORY_GRAPH_QUERY_CONCURRENCY', '1001'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}:`));
  });
});

describe('the handler deadline', () => {
  const room = waitingRoom();
  const server = buildLimitedServer({ timeoutMs: 300 }, room);
  afterAll(async () => {
    room.releaseAll();
    await server.close();
  });

  it('answers a request still being worked on at the deadline with 503 timeout, in svc-error.v1', async () => {
    const started = Date.now();
    const res = await server.inject({ method: 'GET', url: '/slow' });
    const elapsed = Date.now() - started;
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'timeout' });
    expect(res.json().human).toContain('300 ms');
    expect(typeof res.json().generatedAt).toBe('string');
    expect(res.headers['x-request-id']).toBeTruthy();
    // Not before the deadline, and well before anything a hanging request would take.
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(10_000);
  });

  it('gives an endpoint that declares a longer deadline (timeoutMs) that deadline instead', async () => {
    const started = Date.now();
    const released = setTimeout(() => room.releaseAll(), 500);
    const res = await server.inject({ method: 'GET', url: '/long' });
    clearTimeout(released);
    expect(res.statusCode, res.body).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    const timedOut = await server.inject({ method: 'GET', url: '/long' });
    expect(timedOut.statusCode).toBe(503);
    expect(timedOut.json().human).toContain('900 ms');
  });

  it('leaves requests within the deadline alone, and survives the late end of a timed-out one', async () => {
    const late = server.inject({ method: 'GET', url: '/slow' });
    expect((await late).statusCode).toBe(503);
    room.releaseAll();
    const res = await server.inject({ method: 'GET', url: '/fast' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true });
  });

  it('costs a request no AbortController: a POST is answered by its handler, with no abort made for it', async () => {
    // Fastify's own deadline made one per request and aborted it once a POST's body was read
    // (src/platform/http/deadline.ts): a tenth of a small signed ingest's server thread.
    const Original = globalThis.AbortController;
    let made = 0;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        made += 1;
      }
    };
    try {
      const releasing = setInterval(() => room.releaseAll(), 10);
      const answers = await Promise.all(Array.from({ length: 5 }, () => server.inject({ method: 'POST', url: '/work', payload: {} })));
      clearInterval(releasing);
      expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200]);
      expect(made).toBe(0);
    } finally {
      globalThis.AbortController = Original;
    }
  });
});

describe('body limits per route', () => {
  const server = buildLimitedServer({}, waitingRoom());
  afterAll(() => server.close());

  it('refuses a body over the route limit with 413 naming that limit', async () => {
    const res = await server.inject({ method: 'POST', url: '/small', payload: { text: 'x'.repeat(2000) } });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'payload-too-large', limitBytes: 1024 });
    expect(res.json().human).toContain('1 KiB');
    expect(res.json().human).not.toContain('MiB');
    expect((await server.inject({ method: 'POST', url: '/small', payload: { text: 'x'.repeat(900) } })).statusCode).toBe(200);
  });

  it('keeps 1 MiB on routes that state no limit, and names it when refusing', async () => {
    expect(BODY_LIMIT_BYTES).toBe(1024 * 1024);
    const under = await server.inject({ method: 'POST', url: '/roomy', payload: { text: 'x'.repeat(BODY_LIMIT_BYTES - 100) } });
    expect(under.statusCode).toBe(200);
    const over = await server.inject({ method: 'POST', url: '/roomy', payload: { text: 'x'.repeat(BODY_LIMIT_BYTES) } });
    expect(over.statusCode).toBe(413);
    expect(over.json()).toMatchObject({ reason: 'payload-too-large', limitBytes: BODY_LIMIT_BYTES });
    expect(over.json().human).toContain('1 MiB');
  });

  it('stops start-up for a body limit that is not a positive whole number of bytes', () => {
    const endpoint = defineEndpoint({ ...common, id: 'bad', title: 'Bad', method: 'POST', path: '/bad', kind: 'write', bodyLimit: 0, handler: async () => ({ ok: true }) });
    expect(() =>
      buildBareServer([endpoint]),
    ).toThrow(/bad.*bodyLimit/);
  });
});

describe('the cap on concurrent ingest work', () => {
  const room = waitingRoom();
  const server = buildLimitedServer({ ingestConcurrency: 2, timeoutMs: 60_000 }, room);
  const slots = server.concurrencyLimits.ingest;
  afterEach(async () => {
    room.releaseAll();
    await expect.poll(() => slots.inUse()).toBe(0);
  });
  afterAll(() => server.close());

  it('refuses the third concurrent request at once with 503 overloaded and Retry-After, and frees every slot after', async () => {
    const first = server.inject({ method: 'POST', url: '/work', payload: {} });
    const second = server.inject({ method: 'POST', url: '/work', payload: {} });
    await expect.poll(() => slots.inUse()).toBe(2);
    const third = await server.inject({ method: 'POST', url: '/work', payload: {} });
    expect(third.statusCode).toBe(503);
    expect(third.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'overloaded', retryAfterSec: 1 });
    expect(third.headers['retry-after']).toBe('1');
    room.releaseAll();
    expect((await first).statusCode).toBe(200);
    expect((await second).statusCode).toBe(200);
    expect(slots.inUse()).toBe(0);
    // A slot freed is a slot usable again.
    const again = server.inject({ method: 'POST', url: '/work', payload: {} });
    await expect.poll(() => slots.inUse()).toBe(1);
    room.releaseAll();
    expect((await again).statusCode).toBe(200);
  });

  it('frees the slot of a request whose work fails', async () => {
    const failing = server.inject({ method: 'POST', url: '/work', payload: { fail: true } });
    await expect.poll(() => slots.inUse()).toBe(1);
    room.releaseAll();
    expect((await failing).statusCode).toBe(500);
    expect(slots.inUse()).toBe(0);
  });

  it('frees the slot of a request refused before its handler (a body that fails its schema)', async () => {
    const res = await server.inject({ method: 'POST', url: '/work', payload: { unknown: 1 } });
    expect(res.statusCode).toBe(400);
    await expect.poll(() => slots.inUse()).toBe(0);
  });

  it('keeps the slot of an aborted request while its work runs, and frees it when the work ends', async () => {
    const address = await listen(server);
    const { port } = new URL(address);
    const aborted = new Promise<void>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port: Number(port), method: 'POST', path: '/work', headers: { 'content-type': 'application/json' } });
      req.on('error', () => resolve());
      req.end('{}');
      void expect
        .poll(() => slots.inUse())
        .toBe(1)
        .then(() => req.destroy());
    });
    await aborted;
    // The client is gone, but its handler still works: the slot stays taken, so aborting cannot push work past the cap.
    expect(slots.inUse()).toBe(1);
    room.releaseAll();
    await expect.poll(() => slots.inUse()).toBe(0);
  });
});

describe('the cap on concurrent graph queries', () => {
  const room = waitingRoom();
  const server = buildLimitedServer({ ingestConcurrency: 2, graphQueryConcurrency: 1, timeoutMs: 60_000 }, room);
  afterAll(async () => {
    room.releaseAll();
    await server.close();
  });

  it('is a pool of its own: a second query waits for none and is refused, while ingest slots stay free', async () => {
    const first = server.inject({ method: 'POST', url: '/graph', payload: {} });
    await expect.poll(() => server.concurrencyLimits['graph-query'].inUse()).toBe(1);
    const second = await server.inject({ method: 'POST', url: '/graph', payload: {} });
    expect(second.statusCode).toBe(503);
    expect(second.json()).toMatchObject({ reason: 'overloaded', retryAfterSec: 1 });
    expect(second.json().human).toContain('1 graph-query requests');
    expect(server.concurrencyLimits.ingest.inUse()).toBe(0);
    const work = server.inject({ method: 'POST', url: '/work', payload: {} });
    await expect.poll(() => server.concurrencyLimits.ingest.inUse()).toBe(1);
    room.releaseAll();
    expect((await first).statusCode).toBe(200);
    expect((await work).statusCode).toBe(200);
    await expect.poll(() => server.concurrencyLimits['graph-query'].inUse()).toBe(0);
  });
});

describe('the deadline and the cap together', () => {
  const room = waitingRoom();
  const server = buildLimitedServer({ ingestConcurrency: 2, timeoutMs: 300 }, room);
  const slots = server.concurrencyLimits.ingest;
  afterAll(async () => {
    room.releaseAll();
    await server.close();
  });

  it('keeps the slots of timed-out requests whose work still runs, so the database never has more than the cap in flight', async () => {
    const [a, b] = await Promise.all([server.inject({ method: 'POST', url: '/work', payload: {} }), server.inject({ method: 'POST', url: '/work', payload: {} })]);
    expect([a.statusCode, b.statusCode]).toEqual([503, 503]);
    expect(a.json().reason).toBe('timeout');
    expect(slots.inUse()).toBe(2);
    const refused = await server.inject({ method: 'POST', url: '/work', payload: {} });
    expect(refused.json().reason).toBe('overloaded');
    expect(refused.headers['retry-after']).toBe('1');
    room.releaseAll();
    await expect.poll(() => slots.inUse()).toBe(0);
  });
});

describe('over a real socket', () => {
  const room = waitingRoom();
  const server = buildLimitedServer({ maxHeaderBytes: 2048, receiveTimeoutMs: 1000 }, room);
  let address: string;
  beforeAll(async () => {
    address = await listen(server);
  });
  afterAll(async () => {
    room.releaseAll();
    await server.close();
  });

  it('answers headers over the limit with 431 headers-too-large in svc-error.v1', async () => {
    const res = await fetch(`${address}/fast`, { headers: { 'x-padding': 'a'.repeat(4096) } });
    expect(res.status).toBe(431);
    expect(res.headers.get('content-type')).toContain('application/json');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ schema: 'svc-error.v1', reason: 'headers-too-large' });
    expect(body.human).toContain('2 KiB');
    expect(typeof body.generatedAt).toBe('string');
  });

  it('takes headers within the limit', async () => {
    const res = await fetch(`${address}/fast`, { headers: { 'x-padding': 'a'.repeat(1000) } });
    expect(res.status).toBe(200);
  });

  it('answers a client that stops sending its headers with 408 request-timeout (slowloris)', async () => {
    const started = Date.now();
    const answer = await rawExchange(address, 'GET /fast HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
    expect(answer.startsWith('HTTP/1.1 408')).toBe(true);
    expect(jsonBodyOf(answer)).toMatchObject({ schema: 'svc-error.v1', reason: 'request-timeout' });
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('answers a request Node cannot parse with 400 bad-request in svc-error.v1', async () => {
    const answer = await rawExchange(address, 'NOT HTTP AT ALL\r\n\r\n');
    expect(answer.startsWith('HTTP/1.1 400')).toBe(true);
    expect(jsonBodyOf(answer)).toMatchObject({ schema: 'svc-error.v1', reason: 'bad-request' });
  });

  it('names each parser refusal by its Node error code', () => {
    const limits = { maxHeaderBytes: 16_384, receiveTimeoutMs: 30_000 };
    expect(clientErrorRefusal('HPE_HEADER_OVERFLOW', limits)).toMatchObject({ status: 431, reason: 'headers-too-large', human: expect.stringContaining('16 KiB') });
    expect(clientErrorRefusal('ERR_HTTP_REQUEST_TIMEOUT', limits)).toMatchObject({ status: 408, reason: 'request-timeout', human: expect.stringContaining('30 s') });
    expect(clientErrorRefusal('HPE_INVALID_METHOD', limits)).toMatchObject({ status: 400, reason: 'bad-request' });
  });
});

describe('the service', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      env: { OBSERVATORY_INGEST_CONCURRENCY: '2', OBSERVATORY_REQUEST_TIMEOUT_MS: '400', OBSERVATORY_MAX_HEADER_BYTES: '4096' },
    });
  });
  afterAll(() => t?.close());

  it('puts exactly the two ingests under the ingest cap', () => {
    const capped = t.app.endpoints.filter((e) => e.concurrency === 'ingest').map((e) => e.path).sort();
    expect(capped).toEqual([EMPIRE_INGEST, INGEST_PATH].sort());
    expect(t.app.server.concurrencyLimits.ingest.capacity).toBe(2);
  });

  it('refuses both ingests with 503 overloaded while the cap is full, writes nothing, and takes them once it frees', async () => {
    const slots = t.app.server.concurrencyLimits.ingest;
    const secret = await createTenant(t, 'limits-edge');
    const honeypotBody = { events: [{ id: 'limits-1', path: '/', ip: '198.51.100.7' }] };
    const empireEvents = [{ id: 'limits-e1', eventType: 'crawl.started', payload: { n: 1 } }];
    const sendHoneypot = (key = secret) => signedIngest(t, { slug: 'limits-edge', secret: key, unixSeconds: Math.floor(Date.now() / 1000), body: honeypotBody });
    const sendEmpire = (token?: string | null) =>
      t.call({ method: 'POST', url: EMPIRE_INGEST, payload: { toolset: 'limits-lab', events: empireEvents }, ...(token !== undefined ? { token } : {}) });

    // The database is not slowed here: two callers' slots are held directly, as two slow ingests would hold them.
    const held = [slots.tryAcquire()!, slots.tryAcquire()!];
    try {
      for (const res of [await sendHoneypot(), await sendEmpire()]) {
        expect(res.statusCode, res.body).toBe(503);
        expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'overloaded', retryAfterSec: 1 });
        expect(res.headers['retry-after']).toBe('1');
      }
      // A slot is taken only after authentication: a caller without a credential learns 401, not 503.
      expect((await sendEmpire(null)).statusCode).toBe(401);
      expect((await sendHoneypot('whsec_not-the-secret-not-the-secret-000')).json().reason).toBe('bad-signature');
      expect(slots.inUse()).toBe(2);
    } finally {
      for (const slot of held) slot.release();
    }

    const honeypot = await sendHoneypot();
    expect(honeypot.statusCode, honeypot.body).toBe(200);
    expect(honeypot.json()).toMatchObject({ accepted: 1, duplicates: 0 });
    const empire = await sendEmpire();
    expect(empire.statusCode, empire.body).toBe(200);
    expect(empire.json()).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(slots.inUse()).toBe(0);
  });

  it('answers a request held up by the database at OBSERVATORY_REQUEST_TIMEOUT_MS with 503 timeout', async () => {
    // Another transaction holds the token table, so the credential lookup of the next call waits
    // (on PGlite, its single connection waits for the transaction to end).
    const locked = gate();
    const done = gate();
    const holder = t.app.database.db.transaction(async (tx) => {
      await tx.execute(sql`LOCK TABLE api_tokens IN ACCESS EXCLUSIVE MODE`);
      locked.open();
      await done.opened;
    });
    await locked.opened;
    try {
      const started = Date.now();
      const res = await t.call({ method: 'GET', url: `${V1}/tokens` });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'timeout' });
      expect(res.json().human).toContain('400 ms');
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      done.open();
      await holder;
    }
    expect((await t.call({ method: 'GET', url: `${V1}/tokens` })).statusCode).toBe(200);
  });

  it('names the real limit in a 413 from a real route (1 MiB), and takes a body just under it', async () => {
    const over = await t.call({ method: 'POST', url: `${V1}/tokens`, payload: { name: 'x'.repeat(BODY_LIMIT_BYTES), scopes: [] } });
    expect(over.statusCode).toBe(413);
    expect(over.json()).toMatchObject({ reason: 'payload-too-large', limitBytes: BODY_LIMIT_BYTES });
    expect(over.json().human).toContain('1 MiB');
    // Just under 1 MiB the body is read and judged on its fields (the name is too long), not its size.
    const under = await t.call({ method: 'POST', url: `${V1}/tokens`, payload: { name: 'x'.repeat(BODY_LIMIT_BYTES - 100), scopes: [] } });
    expect(under.statusCode).toBe(400);
    expect(under.json().reason).toBe('invalid-body');
  });

  it('answers headers over OBSERVATORY_MAX_HEADER_BYTES with 431 on its listening socket', async () => {
    const address = await t.app.server.listen({ port: 0, host: '127.0.0.1' });
    const res = await fetch(`${address}/healthz`, { headers: { 'x-padding': 'a'.repeat(8192) } });
    expect(res.status).toBe(431);
    expect(await res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'headers-too-large', human: expect.stringContaining('4 KiB') });
    expect((await fetch(`${address}/healthz`)).status).toBe(200);
  });
});
