import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMaze, FALLBACK_TOPICS } from './maze.ts';
import { createRouter, type Router, type RouterOptions } from './router.ts';

/**
 * The router's own rules against a stand-in ingest that answers as told (the real service is in
 * test/router.e2e.test.ts at the repository root): how long it waits for a verdict, when it
 * delays, the bound on held responses.
 */
type Mode = 'answer' | 'hang' | 'down';

type Received = { id: string; ua: string; path: string; ja4?: string };

async function standIn(modeOf: () => Mode): Promise<{ url: string; server: Server; received: () => number; events: Received[] }> {
  let received = 0;
  const seen: Received[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const mode = modeOf();
    if (mode === 'hang') return;
    if (mode === 'down') return res.writeHead(503, { 'content-type': 'application/json' }).end('{"schema":"svc-error.v1","reason":"unavailable","message":"down"}');
    const events = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events: Received[] }).events;
    received += events.length;
    seen.push(...events);
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
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, received: () => received, events: seen };
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
  return { router, get, ingest, site };
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

  it('serves a page again from its cache byte for byte, within the cache\'s bound, and robots.txt per host', async () => {
    const { site, ingest } = await setUp({ current: 'answer' }, { pageCacheBytes: 8000 });
    const maze = createMaze({ topics: FALLBACK_TOPICS, agentApiBase: ingest.url, siteName: 'Open Research Archive' });
    const raw = (target: string, host: string) =>
      new Promise<{ status: number; type: string; length: number; body: string }>((resolve, reject) => {
        const { port } = new URL(site);
        httpRequest({ host: '127.0.0.1', port, path: target, headers: { host, 'user-agent': 'browser' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), length: Number(res.headers['content-length']), body: Buffer.concat(chunks).toString('utf8') }));
        })
          .on('error', reject)
          .end();
      });
    // More pages than the bound holds, each asked for twice, in turn.
    const paths = ['/q/a', '/agents/b', '/honeypot/topics/llm-pricing/c', '/q/d', '/agents/e', '/nowhere', '/'];
    for (const round of [1, 2]) {
      for (const target of paths) {
        const page = maze(target, 'http://unused');
        const served = await raw(`${target}?round=${round}`, 'bait.example');
        expect(served).toEqual({ status: page.status, type: page.contentType, length: Buffer.byteLength(page.body), body: page.body });
      }
    }
    expect((await raw('/robots.txt', 'one.example')).body).toContain('Sitemap: http://one.example/sitemap.xml');
    expect((await raw('/robots.txt', 'two.example')).body).toContain('Sitemap: http://two.example/sitemap.xml');
    expect((await raw('/sitemap.xml', 'two.example')).body).toContain('<loc>http://two.example/q/latest</loc>');
  });
});

/** A self-signed certificate for `localhost`, made by the openssl command for this run. */
function selfSigned(): { cert: string; key: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'router-tls-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
    return { cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8'), key: readFileSync(path.join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the router terminating TLS', () => {
  let pem: { cert: string; key: string };
  beforeAll(() => {
    pem = selfSigned();
  });

  const getTls = (site: string, pathname: string, alpn?: string[]) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const { port } = new URL(site);
      const req = httpsRequest({ host: '127.0.0.1', port: Number(port), path: pathname, servername: 'localhost', ca: pem.cert, agent: false, headers: { 'user-agent': 'tls-client' }, ...(alpn ? { ALPNProtocols: alpn } : {}) }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });

  it('serves over HTTPS and records the JA4 of each client\'s own ClientHello', async () => {
    const { router, ingest, site } = await setUp({ current: 'answer' }, { tls: { ...pem } });
    expect(site).toMatch(/^https:\/\//);
    const page = await getTls(site, '/honeypot/topics/llm-pricing');
    expect(page.status).toBe(200);
    // Links are absolute to the origin the client reached, which is HTTPS now.
    expect((await getTls(site, '/robots.txt')).body).toContain('Sitemap: https://');
    await getTls(site, '/q/with-alpn', ['h2', 'http/1.1']);
    await router.sender.flush(3000);
    const byPath = new Map(ingest.events.map((e) => [e.path, e.ja4]));
    const plain = byPath.get('/honeypot/topics/llm-pricing');
    // Node's client: TLS 1.3, SNI sent (d), no ALPN (00) unless asked for.
    expect(plain).toMatch(/^t13d\d{4}00_[0-9a-f]{12}_[0-9a-f]{12}$/);
    expect(byPath.get('/robots.txt')).toBe(plain);
    const withAlpn = byPath.get('/q/with-alpn') as string;
    expect(withAlpn.slice(0, 8)).toBe(plain!.slice(0, 8).replace(/(\d{2})$/, (n) => String(Number(n) + 1).padStart(2, '0')));
    expect(withAlpn.slice(8, 10)).toBe('h2');
    expect(withAlpn.slice(10)).toBe(plain!.slice(10));
  });

  it('believes no JA4 header, even from a trusted proxy, over its own reading', async () => {
    const { router, ingest, site } = await setUp({ current: 'answer' }, { tls: { ...pem }, trustedProxies: ['127.0.0.1'], ja4Header: 'x-ja4' });
    const { port } = new URL(site);
    await new Promise<void>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port: Number(port), path: '/agents/x', servername: 'localhost', ca: pem.cert, agent: false, headers: { 'x-ja4': 't13d0000h2_aaaaaaaaaaaa_bbbbbbbbbbbb' } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
    await router.sender.flush(3000);
    expect(ingest.events[0]?.ja4).toMatch(/^t13d\d{4}00_/);
  });

  it('closes a connection that does not open with a ClientHello, or is too slow to send one', async () => {
    const { router, site } = await setUp({ current: 'answer' }, { tls: { ...pem, helloTimeoutMs: 200 } });
    const port = Number(new URL(site).port);
    const closed = (send: string | null) =>
      new Promise<number>((resolve) => {
        const started = performance.now();
        const socket = connect(port, '127.0.0.1', () => {
          if (send !== null) socket.write(send);
        });
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(performance.now() - started));
        socket.resume();
      });
    expect(await closed('GET / HTTP/1.1\r\nHost: x\r\n\r\n')).toBeLessThan(150);
    expect(await closed(null)).toBeGreaterThanOrEqual(190);
    expect(router.stats()).toMatchObject({ helloRefused: 2, requests: 0 });
  });
});
