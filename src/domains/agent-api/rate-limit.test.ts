import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';

// Rate limits of the public agent API (spec C Limits): 20 calls a minute per (caller IP,
// agent_name) without a key, 200 per key, X-RateLimit-* on every answer, 429 + Retry-After.
// The ceilings against abuse (per address, unknown keys) are tested in abuse.test.ts.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const search = (options: { agent?: string; ip?: string; headers?: Record<string, string> } = {}) =>
  t.call({
    method: 'GET',
    url: `/api/agent?query=passport${options.agent === undefined ? '' : `&agent_name=${encodeURIComponent(options.agent)}`}`,
    token: null,
    headers: options.headers ?? {},
    ...(options.ip ? { remoteAddress: options.ip } : {}),
  });

async function createKey(): Promise<string> {
  const res = await t.call({ method: 'POST', url: `${V1}/agent-api/keys`, payload: { name: 'Research crawler', plan: 'pro' } });
  expect(res.statusCode).toBe(200);
  return res.json<{ key: string }>().key;
}

describe('anonymous limit', () => {
  it('lets the 20th call through and refuses the 21st with 429 and Retry-After', async () => {
    const agent = `agent-${randomUUID()}`;
    for (let i = 1; i <= 20; i++) {
      const res = await search({ agent, ip: '198.51.100.1' });
      expect(res.statusCode, `call ${i}`).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('20');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(20 - i));
    }
    const refused = await search({ agent, ip: '198.51.100.1' });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'rate-limited' });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-ratelimit-limit']).toBe('20');
  });

  it('counts another agent_name, and another IP, apart', async () => {
    const agent = `agent-${randomUUID()}`;
    for (let i = 0; i < 20; i++) await search({ agent, ip: '198.51.100.2' });
    expect((await search({ agent, ip: '198.51.100.2' })).statusCode).toBe(429);
    expect((await search({ agent: `${agent}-other`, ip: '198.51.100.2' })).statusCode).toBe(200);
    expect((await search({ agent, ip: '198.51.100.3' })).statusCode).toBe(200);
  });

  it('counts invalid calls, and charges a batch one call per query', async () => {
    const agent = `agent-${randomUUID()}`;
    const bad = await t.call({ method: 'GET', url: `/api/agent?agent_name=${agent}`, token: null, remoteAddress: '198.51.100.4' });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['x-ratelimit-remaining']).toBe('19');
    const batch = await t.call({
      method: 'POST',
      url: '/api/agent/batch',
      token: null,
      remoteAddress: '198.51.100.4',
      payload: { agent_name: agent, queries: ['a', 'b', 'c', 'd', 'e'] },
    });
    expect(batch.statusCode).toBe(200);
    expect(batch.headers['x-ratelimit-remaining']).toBe('14');
  });

  it('takes the caller IP from the socket, not from X-Forwarded-For, unless a trusted proxy is configured', async () => {
    const agent = `agent-${randomUUID()}`;
    for (let i = 0; i < 20; i++) await search({ agent, ip: '198.51.100.5', headers: { 'x-forwarded-for': `203.0.113.${i}` } });
    // A spoofed header does not buy a fresh window.
    expect((await search({ agent, ip: '198.51.100.5', headers: { 'x-forwarded-for': '203.0.113.200' } })).statusCode).toBe(429);

    const proxied = await t.secondInstance({ OBSERVATORY_TRUST_PROXY: '1' });
    const viaProxy = (forwardedFor: string) =>
      proxied.server.inject({ method: 'GET', url: `/api/agent?query=passport&agent_name=${agent}`, remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': forwardedFor } });
    for (let i = 0; i < 20; i++) expect((await viaProxy('203.0.113.7')).statusCode).toBe(200);
    expect((await viaProxy('203.0.113.7')).statusCode).toBe(429);
    expect((await viaProxy('203.0.113.8')).statusCode).toBe(200);
  });
});

describe('every public route', () => {
  it('answers with X-RateLimit-Limit and X-RateLimit-Remaining, whatever the status', async () => {
    const publicRoutes = t.app.endpoints.filter((e) => e.auth === 'agent-key');
    expect(publicRoutes.map((e) => e.path)).toEqual(expect.arrayContaining(['/api/agent', '/feed.xml', '/robots.txt', '/llms.txt', '/.well-known/agent-api']));
    let calls = 0;
    for (const e of publicRoutes) {
      const payload = e.path === '/api/agent/batch' ? { queries: ['dns'] } : e.method === 'POST' ? { query: 'dns' } : undefined;
      for (const url of e.path.includes('{slug}') ? [e.path.replace('{slug}', 'how-the-eye-focuses-light'), e.path.replace('{slug}', 'no-such-topic')] : [e.method === 'GET' && e.path === '/api/agent' ? '/api/agent?query=dns' : e.path]) {
        const res = await t.call({ method: e.method, url, token: null, remoteAddress: '198.51.100.60', ...(payload ? { payload } : {}) });
        calls += 1;
        expect([200, 404], `${e.id} ${url}`).toContain(res.statusCode);
        expect(res.headers['x-ratelimit-limit'], e.id).toBe('20');
        expect(res.headers['x-ratelimit-remaining'], e.id).toBe(String(20 - calls));
      }
    }
  });
});

describe('API keys (D6)', () => {
  it('creates a key shown once, with its plan and prefix, and audits it', async () => {
    const res = await t.call({ method: 'POST', url: `${V1}/agent-api/keys`, payload: { name: 'Docs bot' } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ schema: 'svc-agent-api-key.v1', plan: 'paid', name: 'Docs bot' });
    expect(body.key).toMatch(/^agk_[A-Za-z0-9_-]{32}$/);
    expect(body.key.startsWith(body.prefix)).toBe(true);
    const audit = await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?limit=50` });
    expect(audit.body).toContain('agent-api.key-create');
    expect(audit.body).not.toContain(body.key);
    const bad = await t.call({ method: 'POST', url: `${V1}/agent-api/keys`, payload: { name: 'x', plan: 'Not A Plan' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().field).toBe('body.plan');
    expect((await t.call({ method: 'POST', url: `${V1}/agent-api/keys`, payload: {} })).json().field).toBe('body.name');
  });

  it('raises the limit to 200 per key, in either header, whatever the IP or agent_name', async () => {
    const key = await createKey();
    for (let i = 1; i <= 200; i++) {
      const headers: Record<string, string> = i % 2 === 0 ? { 'x-api-key': key } : { authorization: `Bearer ${key}` };
      const res = await search({ agent: `a${i % 7}`, ip: `198.51.100.${10 + (i % 5)}`, headers });
      expect(res.statusCode, `call ${i}`).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('200');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(200 - i));
    }
    const refused = await search({ headers: { 'x-api-key': key } });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().human).toContain('API key');
    // Another key has its own window.
    expect((await search({ headers: { 'x-api-key': await createKey() } })).statusCode).toBe(200);
  });

  it('refuses an unknown key with 401 rather than falling back to anonymous', async () => {
    const attempts: Record<string, string>[] = [{ 'x-api-key': 'agk_nosuchkeynosuchkeynosuchkey0000' }, { authorization: 'Bearer agk_nosuchkey' }];
    for (const headers of attempts) {
      const res = await search({ headers });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-api-key' });
    }
  });
});

describe.runIf(process.env.REDIS_URL)(`with Redis (REDIS_URL)${process.env.REDIS_URL ? '' : ' (skipped: REDIS_URL is not set)'}`, () => {
  it('makes two instances share one limit', async () => {
    const prefix = `test-${randomUUID()}`;
    const shared = await startTestApp({ env: { REDIS_URL: process.env.REDIS_URL!, OBSERVATORY_AGENT_API_IP_PER_MINUTE: '30' }, rateKeyPrefix: prefix });
    try {
      const other = await shared.secondInstance();
      expect(shared.app.agentApi.limiter.store).toBe('redis');
      const call = (app: typeof other) => app.server.inject({ method: 'GET', url: '/api/agent?query=passport&agent_name=shared', remoteAddress: '198.51.100.50' });
      for (let i = 0; i < 10; i++) {
        expect((await call(shared.app)).statusCode).toBe(200);
        expect((await call(other)).statusCode).toBe(200);
      }
      const last = await call(other);
      expect(last.statusCode).toBe(429);
      expect((await call(shared.app)).statusCode).toBe(429);

      // The per-address ceiling and the unknown-key allowance are shared as well.
      const rotate = (app: typeof other, i: number) => app.server.inject({ method: 'GET', url: `/api/agent?query=passport&agent_name=n${i}`, remoteAddress: '198.51.100.51' });
      for (let i = 0; i < 30; i++) expect((await rotate(i % 2 ? other : shared.app, i)).statusCode, `rotated call ${i}`).toBe(200);
      expect((await rotate(shared.app, 30)).statusCode).toBe(429);
      expect((await rotate(other, 31)).statusCode).toBe(429);
      const bogus = (app: typeof other) =>
        app.server.inject({ method: 'GET', url: '/api/agent?query=passport', remoteAddress: '198.51.100.52', headers: { 'x-api-key': `agk_${randomUUID()}` } });
      for (let i = 0; i < 10; i++) expect((await bogus(i % 2 ? other : shared.app)).statusCode).toBe(401);
      expect((await bogus(shared.app)).statusCode).toBe(429);
      expect((await bogus(other)).statusCode).toBe(429);
    } finally {
      await shared.close();
    }
    // It starts an app of its own, which takes a while on a busy machine.
  }, 120_000);
});
