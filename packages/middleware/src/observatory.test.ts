import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { createObservatory, type Observatory, type ObservatoryOptions } from './observatory.ts';

/**
 * The middleware in real Express, Fastify and Hono apps against a stand-in ingest (the real
 * service is in test/middleware.e2e.test.ts at the repository root). The stand-in records what
 * arrives and answers a User-Agent holding "liar" with a tarpit.
 */
interface StandIn {
  url: string;
  events: Array<Record<string, unknown>>;
  down: boolean;
}

async function standIn(): Promise<StandIn> {
  const state: StandIn = { url: '', events: [], down: false };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (state.down) return res.writeHead(503).end();
    const events = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events: Array<Record<string, unknown>> }).events;
    state.events.push(...events);
    const liar = (e: Record<string, unknown>) => String(e.ua).includes('liar');
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({ accepted: events.length, duplicates: 0, events: events.map((e) => ({ id: e.id, eventId: e.id, uaClass: liar(e) ? 'LIAR' : 'UNKNOWN', fingerprintId: 'fp', tarpit: { active: liar(e), delayMs: liar(e) ? 8000 : 0 } })) }),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return state;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function observatoryFor(ingest: StandIn, options: Partial<ObservatoryOptions> = {}): Promise<Observatory> {
  const observatory = createObservatory({ url: ingest.url, tenant: 'site', secret: 's', sender: { batchMaxWaitMs: 10, backoff: { baseMs: 20, maxMs: 40 } }, ...options });
  cleanups.push(() => observatory.close(200));
  return observatory;
}

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const timed = async (url: string, init: RequestInit = {}) => {
  const started = performance.now();
  const response = await fetch(url, init);
  const body = await response.text();
  return { status: response.status, body, ms: performance.now() - started };
};

describe('Express and Connect', () => {
  it('records every request, the site answering as before, 404s included', async () => {
    const ingest = await standIn();
    const observatory = await observatoryFor(ingest);
    const app = express();
    app.use(observatory.express);
    app.get('/page', (_req, res) => void res.send('hello'));
    const site = await listen(createServer(app));
    expect(await timed(`${site}/page?x=1`, { headers: { 'user-agent': 'GPTBot/1.1', referer: 'https://r.example/' } })).toMatchObject({ status: 200, body: 'hello' });
    expect((await timed(`${site}/nowhere`)).status).toBe(404);
    await observatory.sender.flush(2000);
    expect(ingest.events.map((e) => [e.method, e.path, e.query ?? null])).toEqual([
      ['GET', '/page', 'x=1'],
      ['GET', '/nowhere', null],
    ]);
    expect(ingest.events[0]).toMatchObject({ ua: 'GPTBot/1.1', referer: 'https://r.example/', ip: '127.0.0.1' });
    expect(observatory.stats()).toMatchObject({ observed: 2, errors: 0, delayed: 0 });
  });

  it('never slows or breaks the site while the service is down', async () => {
    const ingest = await standIn();
    ingest.down = true;
    const observatory = await observatoryFor(ingest, { tarpitMaxWaitMs: 1000 });
    const app = express();
    app.use(observatory.express);
    app.get('/', (_req, res) => void res.send('ok'));
    const site = await listen(createServer(app));
    for (let i = 0; i < 5; i += 1) {
      const answer = await timed(`${site}/`);
      expect(answer).toMatchObject({ status: 200, body: 'ok' });
      expect(answer.ms).toBeLessThan(200);
    }
    await expect.poll(() => observatory.stats().sender.failing).toBe(true);
    expect(observatory.stats().sender.pending).toBe(5);
  });

  it('in tarpit mode holds a tarpitted client, for at most tarpitMaxWaitMs, and nobody else', async () => {
    const ingest = await standIn();
    const observatory = await observatoryFor(ingest, { tarpitMaxWaitMs: 300 });
    const app = express();
    app.use(observatory.express);
    app.get('/', (_req, res) => void res.send('ok'));
    const site = await listen(createServer(app));
    // The first request is never held: the middleware does not wait for verdicts.
    expect((await timed(`${site}/`, { headers: { 'user-agent': 'liar-bot' } })).ms).toBeLessThan(200);
    await observatory.sender.flush(2000);
    const held = await timed(`${site}/`, { headers: { 'user-agent': 'liar-bot' } });
    expect(held.ms).toBeGreaterThanOrEqual(290);
    expect(held.ms).toBeLessThan(2000);
    expect((await timed(`${site}/`, { headers: { 'user-agent': 'reader' } })).ms).toBeLessThan(200);
    expect(observatory.stats().delayed).toBe(1);
  });
});

describe('Fastify', () => {
  it('records every route of the app that registers it, 404s included, and holds in tarpit mode', async () => {
    const ingest = await standIn();
    const observatory = await observatoryFor(ingest, { tarpitMaxWaitMs: 250 });
    const app = Fastify();
    await app.register(observatory.fastify);
    await app.register(async (scope) => {
      scope.get('/scoped', async () => 'scoped');
    });
    app.get('/', async () => 'root');
    cleanups.push(() => app.close());
    const site = await app.listen({ port: 0, host: '127.0.0.1' });
    expect((await timed(`${site}/`, { headers: { 'user-agent': 'liar-bot' } })).body).toBe('root');
    expect((await timed(`${site}/scoped`)).body).toBe('scoped');
    expect((await timed(`${site}/missing`)).status).toBe(404);
    await observatory.sender.flush(2000);
    expect(ingest.events.map((e) => e.path)).toEqual(['/', '/scoped', '/missing']);
    expect((await timed(`${site}/`, { headers: { 'user-agent': 'liar-bot' } })).ms).toBeGreaterThanOrEqual(240);
  });
});

describe('fetch handlers (Hono)', () => {
  it('records a Request → Response handler, naming the client by the platform header or by clientAddress', async () => {
    const ingest = await standIn();
    const observatory = await observatoryFor(ingest);
    const app = new Hono();
    app.get('/hello', (c) => c.text('hi'));
    const byHeader = observatory.wrapFetch(app.fetch);
    const response = await byHeader(new Request('http://site.example/hello?a=1', { headers: { 'user-agent': 'ClaudeBot', 'x-forwarded-for': '198.51.100.1, 203.0.113.7' } }));
    expect(await response.text()).toBe('hi');
    const byFunction = observatory.wrapFetch(app.fetch, { clientAddress: () => '2001:db8::5' });
    expect((await byFunction(new Request('http://site.example/nope', { method: 'POST' }))).status).toBe(404);
    await observatory.sender.flush(2000);
    expect(ingest.events.map((e) => [e.method, e.path, e.ip, e.query ?? null])).toEqual([
      ['GET', '/hello', '203.0.113.7', 'a=1'],
      ['POST', '/nope', '2001:db8::5', null],
    ]);
  });

  it('still answers when the request cannot be recorded', async () => {
    const ingest = await standIn();
    const observatory = await observatoryFor(ingest);
    const wrapped = observatory.wrapFetch(async () => new Response('fine'), {
      clientAddress: () => {
        throw new Error('host bug');
      },
    });
    expect(await (await wrapped(new Request('http://site.example/'))).text()).toBe('fine');
    expect(observatory.stats().errors).toBe(1);
  });
});
