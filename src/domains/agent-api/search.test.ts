import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { loadSeedCorpus, type SearchPage, type TopicResult } from './service.ts';

// Search, browse and topic upserts of the public agent API, on the shipped seed corpus. Limits
// are raised so these tests never meet the rate limiter (rate-limit.test.ts covers it).
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { OBSERVATORY_AGENT_API_ANON_PER_MINUTE: '100000', OBSERVATORY_AGENT_API_IP_PER_MINUTE: '100000' } });
});
afterAll(async () => t?.close());

const get = (url: string, headers: Record<string, string> = {}) => t.call({ method: 'GET', url, token: null, headers });
const post = (url: string, payload: unknown) => t.call({ method: 'POST', url, token: null, payload: payload as object });
type Hit = TopicResult;
type Page = SearchPage;

describe('seed corpus', () => {
  it('ships at least 200 topics over the five categories, with unique slugs', () => {
    const corpus = loadSeedCorpus();
    expect(corpus.length).toBeGreaterThanOrEqual(200);
    expect(new Set(corpus.map((c) => c.slug)).size).toBe(corpus.length);
    const byCategory = new Map<string, number>();
    for (const topic of corpus) byCategory.set(topic.category, (byCategory.get(topic.category) ?? 0) + 1);
    expect([...byCategory.keys()].sort()).toEqual(['facts', 'finance', 'health', 'tech', 'travel']);
    for (const count of byCategory.values()) expect(count).toBeGreaterThanOrEqual(30);
  });

  it('is loaded on the first start, once, even when a second instance starts on the same database', async () => {
    const before = (await get('/api/topics')).json<{ total: number }>().total;
    expect(before).toBe(loadSeedCorpus().length);
    const second = await t.secondInstance();
    const after = (await second.server.inject({ method: 'GET', url: '/api/topics' })).json<{ total: number }>().total;
    expect(after).toBe(before);
  });
});

describe('GET /api/agent', () => {
  it('finds topics by words of their title, summary or body, with every result field', async () => {
    const res = await get('/api/agent?query=kubernetes');
    expect(res.statusCode).toBe(200);
    const page = res.json<Page>();
    expect(page).toMatchObject({ query: 'kubernetes', page: 1, limit: 5, nextPage: null });
    const hit = page.results.find((r) => r.slug === 'kubernetes-pods-deployments-and-services');
    expect(hit).toBeDefined();
    expect(hit!.url).toBe('http://localhost:8080/honeypot/topics/kubernetes-pods-deployments-and-services');
    expect(hit!.category).toBe('tech');
    expect(hit!.score).toBeGreaterThan(0);
    expect(hit!.score).toBeLessThan(1);
    expect(Date.parse(hit!.createdAt)).not.toBeNaN();
  });

  it('matches word prefixes and stems, and needs every term', async () => {
    const prefix = (await get('/api/agent?query=kuber')).json<Page>();
    expect(prefix.results.map((r) => r.slug)).toContain('kubernetes-pods-deployments-and-services');
    const both = (await get('/api/agent?query=kubernetes%20pods')).json<Page>();
    expect(both.total).toBeGreaterThan(0);
    const impossible = (await get('/api/agent?query=kubernetes%20yellowstone')).json<Page>();
    expect(impossible.total).toBe(0);
    expect(impossible.results).toEqual([]);
  });

  it('pages through every match exactly once, newest first by default', async () => {
    const first = (await get('/api/agent?query=the%20body&limit=50')).json<Page>();
    const all: Hit[] = [];
    let page: number | null = 1;
    const total = (await get('/api/agent?query=body&limit=3')).json<Page>().total;
    expect(total).toBeGreaterThan(3);
    while (page !== null) {
      const res: Page = (await get(`/api/agent?query=body&limit=3&page=${page}`)).json<Page>();
      expect(res.total).toBe(total);
      all.push(...res.results);
      page = res.nextPage;
    }
    expect(all.length).toBe(total);
    expect(new Set(all.map((h) => h.slug)).size).toBe(total);
    const dates = all.map((h) => h.createdAt);
    expect([...dates].sort().reverse()).toEqual(dates);
    expect(first.total).toBeGreaterThan(0);
  });

  it('counts matches exactly up to 1,000, and says so when there are more', async () => {
    for (const offset of [0, 600]) {
      const topics = Array.from({ length: 600 }, (_, i) => ({
        slug: `zebrafish-${offset + i}`,
        title: `Zebrafish note ${offset + i}`,
        category: 'facts',
        summary: 'About zebrafish.',
        body: 'Zebrafish are small freshwater fish.',
      }));
      expect((await t.call({ method: 'POST', url: `${V1}/agent-api/topics`, payload: { topics } })).statusCode).toBe(200);
    }
    const many = (await get('/api/agent?query=zebrafish&limit=50')).json<Page>();
    expect(many).toMatchObject({ total: 1000, totalExact: false, totalPages: 20, nextPage: 2 });
    // Paging goes on past the counted matches: whether a row follows decides nextPage.
    expect((await get('/api/agent?query=zebrafish&limit=50&page=21')).json<Page>().nextPage).toBe(22);
    expect((await get('/api/agent?query=zebrafish&limit=50&page=24')).json<Page>()).toMatchObject({ nextPage: null });
    const few = (await get('/api/agent?query=zebrafish%20note%201199')).json<Page>();
    expect(few).toMatchObject({ total: 1, totalExact: true, nextPage: null });
  });

  it('answers a page past the end with no results and the true total', async () => {
    const res = (await get('/api/agent?query=body&limit=50&page=999')).json<Page>();
    expect(res.results).toEqual([]);
    expect(res.total).toBeGreaterThan(0);
    expect(res.nextPage).toBeNull();
  });

  it('sorts by title in either order and filters by category', async () => {
    const asc = (await get('/api/agent?query=travel&sort=title&order=asc&limit=50&category=travel')).json<Page>();
    expect(asc.results.length).toBeGreaterThan(1);
    expect(asc.results.every((r) => r.category === 'travel')).toBe(true);
    const titles = asc.results.map((r) => r.title);
    expect([...titles].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(titles);
    const desc = (await get('/api/agent?query=travel&sort=title&order=desc&limit=50&category=travel')).json<Page>();
    expect(desc.results.map((r) => r.title)).toEqual([...titles].reverse());
  });

  it('sends concurrent identical searches to the database once, and answers repeats from the cache', async () => {
    const stats = () => t.app.agentApi.service.cacheStats();
    const before = stats();
    const answers = await Promise.all(Array.from({ length: 5 }, () => get('/api/agent?query=volcanic%20islands&limit=7')));
    expect(new Set(answers.map((a) => JSON.stringify(a.json<Page>().results))).size).toBe(1);
    const afterBurst = stats();
    expect(afterBurst.misses - before.misses).toBe(1);
    expect(afterBurst.joined - before.joined).toBe(4);
    await get('/api/agent?query=volcanic%20islands&limit=7');
    expect(stats().hits - afterBurst.hits).toBe(1);
  });

  it('treats query syntax characters as plain separators', async () => {
    for (const query of ["kubernetes & | ! ( ) : * '", 'kubernetes:*', '(kubernetes)', "k8s' OR 1=1 --"]) {
      const res = await get(`/api/agent?query=${encodeURIComponent(query)}`);
      expect(res.statusCode, query).toBe(200);
    }
    const onlySymbols = await get(`/api/agent?query=${encodeURIComponent('&&& !!!')}`);
    expect(onlySymbols.statusCode).toBe(200);
    expect(onlySymbols.json<Page>().total).toBe(0);
  });

  it('answers any non-blank query with 200 (PostgreSQL never sees tsquery syntax)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 100 }).filter((q) => q.trim() !== '' && !q.includes('\u0000')), async (query) => {
        const res = await post('/api/agent', { query });
        expect(res.statusCode, query).toBe(200);
      }),
      { numRuns: 60 },
    );
  });

  it('refuses bad parameters with 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      ['/api/agent', 'query.query'],
      ['/api/agent?query=', 'query.query'],
      ['/api/agent?query=%20%20', 'query.query'],
      ['/api/agent?query=a&limit=51', 'query.limit'],
      ['/api/agent?query=a&limit=0', 'query.limit'],
      ['/api/agent?query=a&limit=ten', 'query.limit'],
      ['/api/agent?query=a&page=0', 'query.page'],
      ['/api/agent?query=a&page=1.5', 'query.page'],
      ['/api/agent?query=a&sort=relevance', 'query.sort'],
      ['/api/agent?query=a&order=up', 'query.order'],
      ['/api/agent?query=a&category=sports', 'query.category'],
      [`/api/agent?query=${'a'.repeat(501)}`, 'query.query'],
    ];
    for (const [url, field] of cases) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toMatchObject({ schema: 'svc-error.v1', field });
      expect(res.json().human, url).toContain(field);
    }
    const sort = await get('/api/agent?query=a&sort=relevance');
    expect(sort.json().human).toContain('createdAt, title');
  });
});

describe('POST /api/agent and /api/agent/batch', () => {
  it('answers a JSON body exactly as the query string', async () => {
    const viaGet = (await get('/api/agent?query=passport&limit=3&category=travel')).json<Page>();
    const viaPost = await post('/api/agent', { query: 'passport', limit: 3, category: 'travel', agent_name: 'tester' });
    expect(viaPost.statusCode).toBe(200);
    expect(viaPost.json<Page>().results).toEqual(viaGet.results);
    expect(viaPost.json<Page>().total).toBe(viaGet.total);
  });

  it('refuses a bad body with 400 naming the field', async () => {
    expect((await post('/api/agent', { limit: 3 })).json()).toMatchObject({ field: 'body.query' });
    expect((await post('/api/agent', { query: '   ' })).json()).toMatchObject({ field: 'body.query', reason: 'invalid-body' });
    expect((await post('/api/agent', { query: 'a', limit: '3x' })).json()).toMatchObject({ field: 'body.limit' });
    const malformed = await t.call({ method: 'POST', url: '/api/agent', token: null, payload: '{"query":', headers: { 'content-type': 'application/json' } });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().reason).toBe('malformed-json');
  });

  it('answers each query of a batch in order, and refuses more than ten', async () => {
    const res = await post('/api/agent/batch', { queries: ['kubernetes', 'passport', 'zzzznothing'], limit: 2 });
    expect(res.statusCode).toBe(200);
    const results = res.json<{ results: { query: string; total: number; results: Hit[] }[] }>().results;
    expect(results.map((r) => r.query)).toEqual(['kubernetes', 'passport', 'zzzznothing']);
    expect(results[0]!.results.length).toBeGreaterThan(0);
    expect(results[0]!.results.length).toBeLessThanOrEqual(2);
    expect(results[2]!.total).toBe(0);
    const tooMany = await post('/api/agent/batch', { queries: Array.from({ length: 11 }, (_, i) => `q${i}`) });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().field).toBe('body.queries');
    const blank = await post('/api/agent/batch', { queries: ['ok', '   '] });
    expect(blank.statusCode).toBe(400);
    expect(blank.json().field).toBe('body.queries[1]');
    expect((await post('/api/agent/batch', { queries: [] })).statusCode).toBe(400);
  });
});

describe('browsing topics', () => {
  it('lists topics newest first with paging and a category filter', async () => {
    const res = (await get('/api/topics?category=health&limit=7&page=2')).json<{ topics: Hit[]; total: number; page: number; nextPage: number | null }>();
    expect(res.topics).toHaveLength(7);
    expect(res.topics.every((topic) => topic.category === 'health')).toBe(true);
    expect(res.page).toBe(2);
    expect(res.nextPage).toBe(3);
    expect(res.total).toBe(loadSeedCorpus().filter((c) => c.category === 'health').length);
    expect((await get('/api/topics?limit=51')).statusCode).toBe(400);
    expect((await get('/api/topics?category=nope')).json().field).toBe('query.category');
  });

  it('lists 20 topics a page by default, from page 1', async () => {
    const res = (await get('/api/topics')).json<{ topics: Hit[]; page: number; limit: number; nextPage: number | null }>();
    expect(res).toMatchObject({ page: 1, limit: 20, nextPage: 2 });
    expect(res.topics).toHaveLength(20);
  });

  it('reads one topic with its body, and answers 404 for an unknown slug', async () => {
    const seed = loadSeedCorpus()[0]!;
    const res = await get(`/api/topics/${seed.slug}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().topic).toMatchObject({ slug: seed.slug, title: seed.title, body: seed.body, category: seed.category });
    const missing = await get('/api/topics/no-such-topic');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
  });
});

describe('POST {v1}/agent-api/topics (D6)', () => {
  it('inserts and replaces topics by slug, searchable at once, and audits the write', async () => {
    // Searched first, so a remembered answer would show if the upsert did not forget it.
    expect((await get('/api/agent?query=quokkaology')).json<Page>().total).toBe(0);
    const topic = { slug: 'quokka-facts', title: 'Quokkaology for beginners', category: 'facts', summary: 'Small marsupials.', body: 'Quokkas live on Rottnest Island.' };
    const created = await t.call({ method: 'POST', url: `${V1}/agent-api/topics`, payload: { topics: [topic] } });
    expect(created.statusCode).toBe(200);
    expect(created.json()).toMatchObject({ schema: 'svc-agent-topics-upsert.v1', ok: true, upserted: 1, inserted: 1, updated: 0 });
    expect((await get('/api/agent?query=quokkaology')).json<Page>().results.map((r) => r.slug)).toEqual(['quokka-facts']);

    const replaced = await t.call({
      method: 'POST',
      url: `${V1}/agent-api/topics`,
      payload: { topics: [{ ...topic, title: 'Quokka field notes', createdAt: '2025-01-02T03:04:05Z' }] },
    });
    expect(replaced.json()).toMatchObject({ upserted: 1, inserted: 0, updated: 1 });
    const read = (await get('/api/topics/quokka-facts')).json().topic;
    expect(read).toMatchObject({ title: 'Quokka field notes', createdAt: '2025-01-02T03:04:05.000Z' });
    expect((await get('/api/agent?query=quokkaology')).json<Page>().total).toBe(0);

    const audit = await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?limit=20` });
    expect(audit.body).toContain('agent-api.topics-upsert');
  });

  it('refuses a repeated slug, a bad category or slug, with 400 and nothing written', async () => {
    const topic = { slug: 'twice', title: 'T', category: 'tech', summary: 'S', body: 'B' };
    const twice = await t.call({ method: 'POST', url: `${V1}/agent-api/topics`, payload: { topics: [topic, topic] } });
    expect(twice.statusCode).toBe(400);
    expect(twice.json().field).toBe('body.topics[1].slug');
    expect((await get('/api/topics/twice')).statusCode).toBe(404);
    const badCategory = await t.call({ method: 'POST', url: `${V1}/agent-api/topics`, payload: { topics: [{ ...topic, category: 'sports' }] } });
    expect(badCategory.json().field).toBe('body.topics[0].category');
    const badSlug = await t.call({ method: 'POST', url: `${V1}/agent-api/topics`, payload: { topics: [{ ...topic, slug: 'Bad Slug' }] } });
    expect(badSlug.json().field).toBe('body.topics[0].slug');
  });
});
