import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createObservatory, type Observatory } from '@observatory/middleware';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { GPTBOT_UA } from './helpers/honeypot.ts';

/**
 * The middleware (packages/middleware) in an Express site in front of the real service: what the
 * site serves is recorded with the service's verdicts, and in tarpit mode a liar whose
 * fingerprint the service tarpitted is held, for no longer than the site allows.
 */

let t: TestApp;
let observatory: Observatory;
let site: string;
const server = createServer();
const LIAR_THRESHOLD = 2;

beforeAll(async () => {
  t = await startTestApp({ env: { OBSERVATORY_LIAR_THRESHOLD: String(LIAR_THRESHOLD) } });
  const service = await t.app.server.listen({ port: 0, host: '127.0.0.1' });
  const created = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload: { slug: 'express-site', name: 'Express site' } });
  observatory = createObservatory({ url: service, tenant: 'express-site', secret: created.json().signingSecret, trustedProxies: ['127.0.0.1'], tarpitMaxWaitMs: 400, sender: { batchMaxWaitMs: 10 } });
  const app = express();
  app.use(observatory.express);
  app.get('/docs/:page', (req, res) => void res.send(`page ${req.params.page}`));
  server.on('request', app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  site = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await observatory?.close(1000);
  await t?.close();
});

const visit = async (path: string, ip: string, ua: string) => {
  const started = performance.now();
  const response = await fetch(`${site}${path}`, { headers: { 'user-agent': ua, 'x-forwarded-for': ip } });
  return { status: response.status, body: await response.text(), ms: performance.now() - started };
};

describe('the middleware in front of the service', () => {
  it('records what an Express site serves, with the verdicts', async () => {
    expect(await visit('/docs/intro', '52.230.152.12', GPTBOT_UA)).toMatchObject({ status: 200, body: 'page intro' });
    await visit('/docs/pricing', '198.51.100.77', GPTBOT_UA);
    await observatory.sender.flush(5000);
    const recent = await t.call({ method: 'GET', url: `${V1}/honeypot/recent?tenant=express-site&limit=10` });
    const classes = Object.fromEntries((recent.json().events as Array<{ path: string; uaClass: string }>).map((e) => [e.path, e.uaClass]));
    expect(classes).toEqual({ '/docs/intro': 'KNOWN_LLM_AGENT', '/docs/pricing': 'LIAR' });
  });

  it('holds a tarpitted liar for at most tarpitMaxWaitMs, and serves everyone else at once', async () => {
    const liar = `${GPTBOT_UA} mw-liar`;
    for (let i = 0; i < LIAR_THRESHOLD; i += 1) {
      await visit(`/docs/l-${i}`, '203.0.113.44', liar);
      await observatory.sender.flush(5000);
    }
    const held = await visit('/docs/l-held', '203.0.113.44', liar);
    expect(held.status).toBe(200);
    expect(held.ms).toBeGreaterThanOrEqual(390);
    expect(held.ms).toBeLessThan(3000);
    expect((await visit('/docs/ok', '52.230.152.12', GPTBOT_UA)).ms).toBeLessThan(300);
  });
});
