import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRouter, loadTopics, type Router } from '@observatory/router';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { GPTBOT_UA } from './helpers/honeypot.ts';

/**
 * The honeypot router (packages/router) in front of the real service, both on real ports: pages
 * it serves are recorded with the right verdicts (and counted so on the dashboard), and once the service tarpits a liar's
 * fingerprint the router delays that client's answers. The router trusts loopback as its proxy,
 * so each test client names its address in X-Forwarded-For.
 */

let t: TestApp;
let service: string;
let router: Router;
let site: string;
const LIAR_THRESHOLD = 3;

beforeAll(async () => {
  t = await startTestApp({ env: { OBSERVATORY_LIAR_THRESHOLD: String(LIAR_THRESHOLD) } });
  service = await t.app.server.listen({ port: 0, host: '127.0.0.1' });
  const created = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload: { slug: 'router-site', name: 'Router site' } });
  expect(created.statusCode).toBe(200);
  const { topics, problem } = await loadTopics(service);
  expect(problem).toBeNull();
  router = createRouter({
    serviceUrl: service,
    tenant: 'router-site',
    secret: created.json().signingSecret,
    topics,
    trustedProxies: ['127.0.0.1', '::1'],
    ja4Header: 'x-ja4',
    // The service's tarpit asks for 8 s; the test caps it to keep the suite quick.
    maxDelayMs: 700,
  });
  site = await router.listen(0, '127.0.0.1');
}, 180_000);

afterAll(async () => {
  await router?.close();
  await t?.close();
});

const visit = async (path: string, ip: string, ua: string, extra: Record<string, string> = {}) => {
  const started = performance.now();
  const response = await fetch(`${site}${path}`, { headers: { 'user-agent': ua, 'x-forwarded-for': ip, ...extra } });
  const body = await response.text();
  return { status: response.status, body, ms: performance.now() - started };
};

async function recent(): Promise<Array<{ senderId: string; path: string; uaClass: string; ja4: string | null; fingerprintId: string }>> {
  const answer = await t.call({ method: 'GET', url: `${V1}/honeypot/recent?tenant=router-site&limit=100` });
  expect(answer.statusCode).toBe(200);
  return answer.json().events;
}

describe('the router in front of the service', () => {
  it('serves the maze and records each request with its verdict: a GPTBot from a published range is verified, one from elsewhere lies', async () => {
    const real = await visit('/honeypot/topics/alpha', '52.230.152.10', GPTBOT_UA, { 'x-ja4': 't13d1516h2_8daaf6152771_e5627efa2ab1' });
    expect(real.status).toBe(200);
    expect(real.body).toContain('<a href="/honeypot/topics/');
    // The same URL is the same page.
    expect((await visit('/honeypot/topics/alpha', '52.230.152.10', GPTBOT_UA)).body).toBe(real.body);
    const fake = await visit('/q/cheap-gpus', '198.51.100.50', GPTBOT_UA);
    expect(fake.status).toBe(200);
    await router.sender.flush(5000);
    await expect.poll(async () => (await recent()).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    const events = await recent();
    const byPath = (path: string) => events.filter((e) => e.path === path);
    expect(byPath('/honeypot/topics/alpha').map((e) => e.uaClass)).toEqual(['KNOWN_LLM_AGENT', 'KNOWN_LLM_AGENT']);
    expect(byPath('/honeypot/topics/alpha').some((e) => e.ja4 !== null)).toBe(true);
    expect(byPath('/q/cheap-gpus').map((e) => e.uaClass)).toEqual(['LIAR']);
    // The operator's dashboard counts them by those verdicts.
    const dashboard = await t.call({ method: 'GET', url: `${V1}/honeypot/dashboard?tenant=router-site&window=24h` });
    expect(dashboard.statusCode).toBe(200);
    const { kpis, uaClassBreakdown, topPaths } = dashboard.json();
    expect(kpis).toMatchObject({ totalEvents: 3, knownVerifiedCount: 2, liarCount: 1 });
    expect(uaClassBreakdown).toEqual(expect.arrayContaining([{ uaClass: 'KNOWN_LLM_AGENT', count: 2 }, { uaClass: 'LIAR', count: 1 }]));
    expect(topPaths).toEqual(expect.arrayContaining([{ path: '/honeypot/topics/alpha', count: 2 }]));
  });

  it('serves robots.txt forbidding the bait roots, llms.txt and a sitemap, and records those requests too', async () => {
    const robots = await visit('/robots.txt', '198.51.100.60', 'curl/8.0');
    expect(robots.body).toMatch(/Disallow: \/honeypot\/topics\/\nDisallow: \/q\/\nDisallow: \/agents\//);
    expect((await visit('/llms.txt', '198.51.100.60', 'curl/8.0')).body).toMatch(/^# /);
    expect((await visit('/sitemap.xml', '198.51.100.60', 'curl/8.0')).body).toContain('<urlset');
    await router.sender.flush(5000);
    const paths = (await recent()).map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['/robots.txt', '/llms.txt', '/sitemap.xml']));
  });

  it('delays a liar once the service tarpits its fingerprint, also at a new address, and never a verified agent', async () => {
    const liar = 'Mozilla/5.0 (compatible; GPTBot/1.1; +https://openai.com/gptbot) liar-e2e';
    const timings: number[] = [];
    for (let i = 0; i < LIAR_THRESHOLD + 2; i += 1) timings.push((await visit(`/agents/a-${i}`, '203.0.113.9', liar)).ms);
    // Liar events below the threshold are answered at once; the one that reaches it opens the
    // tarpit and is itself held, as is every one after (capped at 700 ms here).
    expect(timings.slice(0, LIAR_THRESHOLD - 1).every((ms) => ms < 600)).toBe(true);
    expect(timings.slice(LIAR_THRESHOLD - 1).every((ms) => ms >= 650)).toBe(true);
    // With a JA4 the fingerprint is the JA4 and the UA, whatever the address: once tarpitted,
    // the same client is held from its first request at an address the router has never seen.
    const ja4 = 't13d1516h2_aaaaaaaaaaaa_bbbbbbbbbbbb';
    for (let i = 0; i < LIAR_THRESHOLD; i += 1) await visit(`/agents/b-${i}`, '203.0.113.20', liar, { 'x-ja4': ja4 });
    const elsewhere = await visit('/agents/b-new', '203.0.113.21', liar, { 'x-ja4': ja4 });
    expect(elsewhere.ms).toBeGreaterThanOrEqual(650);
    const verified = await visit('/agents/ok', '52.230.152.11', GPTBOT_UA);
    expect(verified.ms).toBeLessThan(600);
    expect(router.stats()).toMatchObject({ held: 0 });
    expect(router.stats().delayed).toBeGreaterThanOrEqual(2);
  });
});
