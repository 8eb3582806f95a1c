import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { rowsOf } from '../../platform/db/client.ts';
import { loadSeedCorpus } from './service.ts';

/**
 * The operator reads of the agent API's topics (docs/agent-api/README.md, "Endpoints"): the same topics
 * as GET /api/topics and /api/topics/{slug}, with an operator credential, recorded as no honeypot
 * event and counted against no public rate limit. The app keeps the public limits' defaults.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  // Newer than every seed topic, so they lead the newest-first list.
  const topics = ['alpha', 'beta', 'gamma'].map((word, i) => ({
    slug: `operator-read-${word}`,
    title: `Operator read ${word}`,
    category: 'travel',
    summary: `Summary ${word}.`,
    body: `Body of ${word}.`,
    createdAt: `2030-01-0${i + 1}T00:00:00.000Z`,
  }));
  const res = await t.call({ method: 'POST', url: `${V1}/agent-api/topics`, payload: { topics } });
  expect(res.statusCode).toBe(200);
});
afterAll(async () => t?.close());

interface TopicsPage {
  schema: string;
  topics: { slug: string; category: string; url: string }[];
  page: number;
  limit: number;
  total: number;
  totalPages: number;
  nextPage: number | null;
}

const list = (query: Record<string, string> = {}, token?: string | null) =>
  t.call({ method: 'GET', url: `${V1}/agent-api/topics`, query, ...(token === undefined ? {} : { token }) });
const one = (slug: string, token?: string | null) => t.call({ method: 'GET', url: `${V1}/agent-api/topics/${slug}`, ...(token === undefined ? {} : { token }) });

/** Every stored honeypot event, of any tenant, once the recorder has written what it holds. */
async function eventCount(): Promise<number> {
  await t.app.agentApi.recorder.flush();
  const [row] = rowsOf<{ n: number | string }>(await t.app.database.db.execute(sql`SELECT count(*) AS n FROM honeypot_events`));
  return Number(row?.n ?? 0);
}

describe('GET {v1}/agent-api/topics', () => {
  it('lists every topic newest first, paged like the public list', async () => {
    const res = await list();
    expect(res.statusCode).toBe(200);
    const body = res.json<TopicsPage>();
    const total = loadSeedCorpus().length + 3;
    expect(body).toMatchObject({ schema: 'svc-agent-api-topics.v1', page: 1, limit: 20, total, totalPages: Math.ceil(total / 20), nextPage: 2 });
    expect(body.topics.slice(0, 3).map((x) => x.slug)).toEqual(['operator-read-gamma', 'operator-read-beta', 'operator-read-alpha']);
    expect(body.topics[0]!.url).toBe('http://localhost:8080/honeypot/topics/operator-read-gamma');
    // The same answer as the public list, envelope aside.
    const pub = (await t.call({ method: 'GET', url: '/api/topics', token: null, remoteAddress: '198.51.100.40' })).json<TopicsPage>();
    expect({ ...body, schema: '', generatedAt: '' }).toEqual({ ...pub, schema: '', generatedAt: '' });
  });

  it('filters by category and pages through it', async () => {
    const travel = loadSeedCorpus().filter((x) => x.category === 'travel').length + 3;
    const first = (await list({ category: 'travel', limit: '2' })).json<TopicsPage>();
    expect(first).toMatchObject({ page: 1, limit: 2, total: travel, totalPages: Math.ceil(travel / 2), nextPage: 2 });
    expect(first.topics.map((x) => x.slug)).toEqual(['operator-read-gamma', 'operator-read-beta']);
    const second = (await list({ category: 'travel', limit: '2', page: '2' })).json<TopicsPage>();
    expect(second.page).toBe(2);
    expect(second.topics[0]!.slug).toBe('operator-read-alpha');
    expect(second.topics.every((x) => x.category === 'travel')).toBe(true);
    const last = (await list({ category: 'travel', limit: '2', page: String(first.totalPages) })).json<TopicsPage>();
    expect(last.nextPage).toBeNull();
    expect(last.topics.length).toBe(travel % 2 === 0 ? 2 : 1);
  });

  it('refuses an unknown category and a limit past the maximum with 400', async () => {
    expect((await list({ category: 'gossip' })).json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-query' });
    expect((await list({ limit: '51' })).statusCode).toBe(400);
  });
});

describe('GET {v1}/agent-api/topics/{slug}', () => {
  it('answers one topic with its body', async () => {
    const res = await one('operator-read-beta');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      schema: 'svc-agent-api-topic.v1',
      topic: { slug: 'operator-read-beta', title: 'Operator read beta', category: 'travel', summary: 'Summary beta.', body: 'Body of beta.', createdAt: '2030-01-02T00:00:00.000Z' },
    });
  });

  it('answers 404 not-found for an unknown slug', async () => {
    const res = await one('no-such-topic');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
  });
});

describe('who may read', () => {
  it('answers 401 without a credential', async () => {
    for (const res of [await list({}, null), await one('operator-read-beta', null)]) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1' });
    }
  });

  it('answers 403 to a token without read:tenants, 200 to one with only it', async () => {
    const without = await t.tokenWith(['write:tenants', 'write:tokens', 'read:events']);
    for (const res of [await list({}, without), await one('operator-read-beta', without)]) {
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'forbidden' });
    }
    const reader = await t.tokenWith(['read:tenants']);
    expect((await list({}, reader)).statusCode).toBe(200);
    expect((await one('operator-read-beta', reader)).statusCode).toBe(200);
  });
});

describe('an operator read is no agent call', () => {
  it('records no honeypot event, while the public routes record each call', async () => {
    const before = await eventCount();
    for (let i = 0; i < 3; i++) {
      expect((await list({ category: 'travel' })).statusCode).toBe(200);
      expect((await one('operator-read-alpha')).statusCode).toBe(200);
    }
    expect((await one('no-such-topic')).statusCode).toBe(404);
    expect(await eventCount()).toBe(before);

    const ip = '198.51.100.41';
    expect((await t.call({ method: 'GET', url: '/api/topics?category=travel', token: null, remoteAddress: ip })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: '/api/topics/operator-read-alpha', token: null, remoteAddress: ip })).statusCode).toBe(200);
    expect(await eventCount()).toBe(before + 2);
  });

  it('counts against no public rate limit: more reads than an agent gets a minute, and the address keeps its allowance', async () => {
    const ip = '198.51.100.42';
    for (let i = 0; i < 25; i++) {
      const res = await t.call({ method: 'GET', url: `${V1}/agent-api/topics`, remoteAddress: ip });
      expect(res.statusCode, `read ${i + 1}`).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
    const agent = await t.call({ method: 'GET', url: '/api/topics', token: null, remoteAddress: ip });
    expect(agent.statusCode).toBe(200);
    expect(agent.headers['x-ratelimit-limit']).toBe('20');
    expect(agent.headers['x-ratelimit-remaining']).toBe('19');
  });

  it('writes nothing: the topics and the operator audit are as they were', async () => {
    const snapshot = async () => ({
      topics: rowsOf<{ slug: string; updated_at: string }>(await t.app.database.db.execute(sql`SELECT slug, updated_at::text FROM agent_topics ORDER BY slug`)),
      audit: rowsOf<{ n: number | string }>(await t.app.database.db.execute(sql`SELECT count(*) AS n FROM operator_audit`)),
    });
    const before = await snapshot();
    await list({ category: 'travel' });
    await one('operator-read-gamma');
    expect(await snapshot()).toEqual(before);
  });
});
