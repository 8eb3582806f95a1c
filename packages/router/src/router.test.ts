import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FALLBACK_TOPICS } from './maze.ts';
import { createRouter, type Router, type RouterOptions } from './router.ts';

/**
 * The router's own rules against a stand-in ingest that answers as told (the real service is in
 * test/router.e2e.test.ts at the repository root): how long it waits for a verdict, when it
 * delays, the bound on held responses.
 */
type Mode = 'answer' | 'hang' | 'down';

async function standIn(modeOf: () => Mode): Promise<{ url: string; server: Server; received: () => number }> {
  let received = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const mode = modeOf();
    if (mode === 'hang') return;
    if (mode === 'down') return res.writeHead(503, { 'content-type': 'application/json' }).end('{"schema":"svc-error.v1","reason":"unavailable","message":"down"}');
    const events = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events: Array<{ id: string; ua: string }> }).events;
    received += events.length;
    const liar = (ua: string) => ua.includes('liar');
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        accepted: events.length,
        duplicates: 0,
        events: events.map((e) => ({ id: e.id, eventId: e.id, uaClass: liar(e.ua) ? 'LIAR' : 'UNKNOWN', fingerprintId: `fp-${e.ua}`, tarpit: { active: liar(e.ua), delayMs: liar(e.ua) ? 8000 : 0 } })),
      }),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, received: () => received };
}

const routers: Router[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const router of routers.splice(0)) await router.close(300);
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function setUp(mode: { current: Mode }, options: Partial<RouterOptions> = {}) {
  const ingest = await standIn(() => mode.current);
  servers.push(ingest.server);
  const router = createRouter({ serviceUrl: ingest.url, tenant: 't', secret: 's', topics: FALLBACK_TOPICS, verdictWaitMs: 300, maxDelayMs: 400, sender: { backoff: { baseMs: 50, maxMs: 100 } }, ...options });
  routers.push(router);
  const site = await router.listen(0, '127.0.0.1');
  const get = async (path: string, ua: string, signal?: AbortSignal) => {
    const started = performance.now();
    const response = await fetch(`${site}${path}`, { headers: { 'user-agent': ua }, ...(signal ? { signal } : {}) });
    await response.text();
    return { status: response.status, ms: performance.now() - started };
  };
  return { router, get, ingest };
}

describe('the router', () => {
  it('answers a known, honest client at once and waits for a first request\'s verdict', async () => {
    const { router, get } = await setUp({ current: 'answer' });
    expect((await get('/q/a', 'browser')).status).toBe(200);
    const again = await get('/q/b', 'browser');
    expect(again.ms).toBeLessThan(250);
    expect(router.stats()).toMatchObject({ requests: 2, delayed: 0, verdictTimeouts: 0, clients: 1 });
  });

  it('never makes a first request wait longer than verdictWaitMs for a service that does not answer', async () => {
    const { router, get } = await setUp({ current: 'hang' }, { sender: { requestTimeoutMs: 60_000 } });
    const first = await get('/q/a', 'browser');
    expect(first.status).toBe(200);
    expect(first.ms).toBeGreaterThanOrEqual(280);
    expect(first.ms).toBeLessThan(1500);
    expect(router.stats().verdictTimeouts).toBe(1);
  });

  it('does not wait at all while the service is failing', async () => {
    const mode = { current: 'down' as Mode };
    const { router, get } = await setUp(mode);
    await get('/q/a', 'browser');
    await expect.poll(() => router.stats().sender.failing).toBe(true);
    const next = await get('/q/b', 'someone-new');
    expect(next.ms).toBeLessThan(250);
  });

  it('holds a tarpitted client\'s answers (capped by maxDelayMs), and each of its requests waits for its own verdict', async () => {
    const { router, get } = await setUp({ current: 'answer' });
    const first = await get('/agents/x', 'liar-bot');
    expect(first.ms).toBeGreaterThanOrEqual(380);
    const second = await get('/agents/y', 'liar-bot');
    expect(second.ms).toBeGreaterThanOrEqual(380);
    expect(router.stats()).toMatchObject({ delayed: 2, held: 0, heldPeak: 1 });
  });

  it('holds at most maxHeld responses, answering the rest at once', async () => {
    const { router, get } = await setUp({ current: 'answer' }, { maxHeld: 2, maxDelayMs: 1500 });
    await get('/agents/warm', 'liar-bot');
    const three = await Promise.all([get('/agents/1', 'liar-bot'), get('/agents/2', 'liar-bot'), get('/agents/3', 'liar-bot')]);
    const quick = three.filter((r) => r.ms < 1000);
    expect(quick).toHaveLength(1);
    expect(router.stats()).toMatchObject({ holdOverflow: 1, heldPeak: 2, held: 0 });
  });

  it('frees a held slot as soon as its client goes away', async () => {
    const { router, get } = await setUp({ current: 'answer' }, { maxDelayMs: 10_000 });
    const controller = new AbortController();
    const pending = get('/agents/gone', 'liar-bot', controller.signal).catch(() => 'aborted');
    await expect.poll(() => router.stats().held).toBe(1);
    controller.abort();
    expect(await pending).toBe('aborted');
    await expect.poll(() => router.stats().held).toBe(0);
  });

  it('records every request, whatever it answers', async () => {
    const { router, get, ingest } = await setUp({ current: 'answer' });
    await get('/robots.txt', 'a');
    await get('/wp-login.php', 'b');
    expect((await get(`/q/${'z'.repeat(3000)}`, 'c')).status).toBe(414);
    await router.sender.flush(3000);
    expect(ingest.received()).toBe(3);
  });
});
