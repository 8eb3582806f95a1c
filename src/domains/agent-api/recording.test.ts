import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { CHROME_UA, GPTBOT_UA } from '../../../test/helpers/honeypot.ts';

// Every call to the public API is also a honeypot event of the OBSERVATORY_AGENT_API_TENANT
// tenant (`agent-api` by default), stored through the honeypot's ingest path after the answer.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { OBSERVATORY_AGENT_API_ANON_PER_MINUTE: '100000', OBSERVATORY_AGENT_API_IP_PER_MINUTE: '100000', OBSERVATORY_LIAR_THRESHOLD: '3' } });
});
afterAll(async () => t?.close());

interface RecentEvent {
  path: string;
  query: string | null;
  method: string;
  uaRaw: string;
  ipHash: string;
  referer: string | null;
  uaClass: string;
  fingerprintId: string;
}

async function recent(): Promise<RecentEvent[]> {
  await t.app.agentApi.recorder.flush();
  const res = await t.call({ method: 'GET', url: `${V1}/honeypot/recent?tenant=agent-api&limit=100` });
  expect(res.statusCode).toBe(200);
  return res.json<{ events: RecentEvent[] }>().events;
}

describe('recording calls as honeypot events', () => {
  it('creates the recording tenant at start-up', async () => {
    const tenants = await t.call({ method: 'GET', url: `${V1}/honeypot/tenants` });
    expect(tenants.body).toContain('"slug":"agent-api"');
  });

  it('records a GET with path, query, UA, IP hash, agent_name and source_url', async () => {
    const res = await t.call({
      method: 'GET',
      url: '/api/agent?query=passport&agent_name=research-bot&source_url=https%3A%2F%2Fexample.org%2Fpage',
      token: null,
      remoteAddress: '198.51.100.77',
      headers: { 'user-agent': CHROME_UA, accept: 'application/json', 'x-forwarded-for': '203.0.113.9' },
    });
    expect(res.statusCode).toBe(200);
    const event = (await recent()).find((e) => e.query?.includes('research-bot'));
    expect(event).toBeDefined();
    expect(event).toMatchObject({ method: 'GET', path: '/api/agent', uaRaw: CHROME_UA, referer: 'https://example.org/page' });
    expect(event!.query).toContain('agent_name=research-bot');
    expect(event!.ipHash).toMatch(/^[0-9a-f]{16,}$/);
    const stored = JSON.stringify(event);
    expect(stored).not.toContain('198.51.100.77');
    expect(stored).not.toContain('203.0.113.9');
  });

  it('records a POST body as a query string, and failed calls too', async () => {
    await t.call({ method: 'POST', url: '/api/agent', token: null, payload: { query: 'bonds', agent_name: 'poster', source_url: 'https://a.example/x' } });
    await t.call({ method: 'GET', url: '/api/topics/not-a-topic?agent_name=lost', token: null });
    await t.call({ method: 'GET', url: '/llms.txt', token: null, headers: { 'user-agent': 'curious-agent/1.0' } });
    const events = await recent();
    const posted = events.find((e) => e.query?.includes('agent_name=poster'));
    expect(posted).toMatchObject({ method: 'POST', path: '/api/agent', referer: 'https://a.example/x' });
    expect(posted!.query).toContain('query=bonds');
    expect(events.some((e) => e.path === '/api/topics/not-a-topic')).toBe(true);
    expect(events.some((e) => e.path === '/llms.txt' && e.uaRaw === 'curious-agent/1.0')).toBe(true);
  });

  it('classifies the caller like any honeypot hit, so a lying GPTBot is tarpitted', async () => {
    // 198.51.100.0/24 is no OpenAI range: a GPTBot user agent from it is a liar.
    for (let i = 0; i < 3; i++) {
      await t.call({ method: 'GET', url: `/api/agent?query=dns&agent_name=liar${i}`, token: null, remoteAddress: '198.51.100.99', headers: { 'user-agent': GPTBOT_UA } });
    }
    const liars = (await recent()).filter((e) => e.uaRaw === GPTBOT_UA);
    expect(liars).toHaveLength(3);
    expect(liars.every((e) => e.uaClass === 'LIAR')).toBe(true);
    const tarpits = await t.call({ method: 'GET', url: `${V1}/honeypot/tarpits?tenant=agent-api` });
    expect(tarpits.statusCode).toBe(200);
    expect(tarpits.body).toContain(liars[0]!.fingerprintId);
    expect(tarpits.body).toContain('liar-flood:3/10min');
  });
});

describe('recording never fails a call', () => {
  it('answers normally while the recording tenant is disabled, and counts what it could not record', async () => {
    expect((await t.call({ method: 'POST', url: `${V1}/honeypot/tenants/agent-api/disable` })).statusCode).toBe(200);
    const before = t.app.agentApi.recorder.stats().dropped;
    const res = await t.call({ method: 'GET', url: '/api/agent?query=tides', token: null });
    expect(res.statusCode).toBe(200);
    await t.app.agentApi.recorder.flush();
    expect(t.app.agentApi.recorder.stats().dropped).toBe(before + 1);
    expect((await t.call({ method: 'POST', url: `${V1}/honeypot/tenants/agent-api/enable` })).statusCode).toBe(200);
  });

  it('records nothing when OBSERVATORY_AGENT_API_TENANT is off', async () => {
    const quiet = await t.secondInstance({ OBSERVATORY_AGENT_API_TENANT: 'off' });
    const res = await quiet.server.inject({ method: 'GET', url: '/api/agent?query=tides&agent_name=unrecorded' });
    expect(res.statusCode).toBe(200);
    await quiet.agentApi.recorder.flush();
    expect(quiet.agentApi.recorder.stats()).toMatchObject({ recorded: 0, buffered: 0 });
    expect((await recent()).some((e) => e.query?.includes('unrecorded'))).toBe(false);
  });
});
