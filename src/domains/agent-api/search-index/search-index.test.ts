import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import * as sqlPath from '../repository.ts';
import { queryTerms, toPrefixTsquery } from '../search-query.ts';
import { loadSeedCorpus } from '../service.ts';
import { shownScore } from './rank.ts';

/**
 * The in-process search index against the SQL search it replaces, on the same database: a corpus
 * built to stress it (a small vocabulary so common words match past the 1,000 cap, shared
 * prefixes, stop words, non-ASCII words, ties in created_at and in titles, words repeated in title,
 * summary and body so ranks differ), then random queries of every shape, each answered both ways:
 * the same slugs in the same order, the same capped count, the same score. Then the life of the
 * index through the HTTP API: answered from memory, stale at once after a write here, rebuilt,
 * and a write on another instance seen within the poll interval.
 */

const VOCABULARY = [
  'kubernetes', 'kube', 'kubelet', 'pods', 'pod', 'podcast', 'deploy', 'deployment', 'deploying', 'service', 'services',
  'serve', 'server', 'network', 'networking', 'the', 'and', 'of', 'running', 'runner', 'run', 'café', 'naïve', 'straße',
  'river', 'rivers', 'travel', 'travelling', 'finance', 'financial', 'health', 'healthy', 'fact', 'facts', 'zebra', 'zone',
  'zones', 'quantum', 'quant', 'ad', 'add', 'added', 'adding', 'address', 'abc123', '2024', 'x', 'go', 'going', 'gone',
];
const CATEGORIES = ['tech', 'finance', 'travel', 'health', 'facts'];
const TOPICS = 1300;

let t: TestApp;

function corpus() {
  let state = 7;
  const next = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
  // Skewed: the first words are common, so a one-word search can pass the cap.
  const word = () => VOCABULARY[Math.floor(next() ** 2 * VOCABULARY.length)]!;
  const words = (n: number) => Array.from({ length: n }, word).join(' ');
  return Array.from({ length: TOPICS }, (_, i) => ({
    slug: `t-${String(i).padStart(4, '0')}`,
    // Every 7th title repeats, so title order leans on the slug.
    title: i % 7 === 0 ? 'Shared title about kubernetes' : `${words(3)} ${i % 3 === 0 ? 'kubernetes' : ''}`.trim(),
    category: CATEGORIES[i % CATEGORIES.length]!,
    summary: words(8),
    body: words(25),
    // Every 5th shares one instant, so created_at order leans on the slug.
    createdAt: i % 5 === 0 ? '2025-06-01T00:00:00.000Z' : new Date(Date.parse('2024-01-01T00:00:00Z') + Math.floor(next() * 500 * 86_400_000)).toISOString(),
  }));
}

beforeAll(async () => {
  t = await startTestApp({ env: { OBSERVATORY_AGENT_API_ANON_PER_MINUTE: '1000000', OBSERVATORY_AGENT_API_IP_PER_MINUTE: '1000000' } });
  const topics = corpus();
  for (let i = 0; i < topics.length; i += 500) {
    const res = await t.call({ method: 'POST', url: `${V1}/agent-api/topics`, payload: { topics: topics.slice(i, i + 500) } });
    expect(res.statusCode, res.body).toBe(200);
  }
  await t.app.agentApi.searchIndex.settled();
}, 120_000);
afterAll(async () => t?.close());

type Sort = 'createdAt' | 'title';
type Order = 'asc' | 'desc';

async function bothWays(query: string, options: { category: string | null; sort: Sort; order: Order; limit: number; offset: number }) {
  const tsquery = toPrefixTsquery(query)!;
  const viaSql = await sqlPath.searchTopics(t.app.database.db, { tsquery, ...options });
  const viaIndex = await t.app.agentApi.searchIndex.find({ terms: queryTerms(query), ...options, totalCap: sqlPath.SEARCH_TOTAL_CAP });
  expect(viaIndex, `the index declined "${query}"`).not.toBeNull();
  const sqlSide = {
    slugs: viaSql.hits.map((h) => h.slug),
    scores: viaSql.hits.map((h) => Math.round(h.score * 10_000) / 10_000),
    createdAt: viaSql.hits.map((h) => h.createdAt.toISOString()),
    hasMore: viaSql.hasMore,
    total: viaSql.total,
    totalExact: viaSql.totalExact,
  };
  const indexSide = {
    slugs: viaIndex!.hits.map((h) => h.slug),
    scores: viaIndex!.hits.map((h) => shownScore(h.rank)),
    createdAt: viaIndex!.hits.map((h) => new Date(h.createdAtMs).toISOString()),
    hasMore: viaIndex!.hasMore,
    total: viaIndex!.total,
    totalExact: viaIndex!.totalExact,
  };
  expect(indexSide, JSON.stringify({ query, options })).toEqual(sqlSide);
  return indexSide;
}

const defaults = { category: null, sort: 'createdAt' as Sort, order: 'desc' as Order, limit: 10, offset: 0 };

describe('the search index answers as the SQL search does', () => {
  it('is built from every topic and answers from memory', () => {
    const stats = t.app.agentApi.searchIndex.stats();
    expect(stats).toMatchObject({ enabled: true, ready: true });
    expect(stats.topics).toBe(TOPICS + loadSeedCorpus().length);
    expect(stats.memoryBytes).toBeGreaterThan(0);
  });

  it('agrees on hand-picked shapes: past the cap, prefixes, stems, stop words, non-ASCII, digits, nothing', async () => {
    const common = await bothWays('kubernetes', defaults);
    expect(common.totalExact).toBe(false);
    expect(common.total).toBe(1000);
    expect((await bothWays('kub', { ...defaults, sort: 'title', order: 'asc' })).slugs.length).toBe(10);
    await bothWays('deploying services', defaults);
    await bothWays('the running of pods', { ...defaults, order: 'asc' });
    await bothWays('café', defaults);
    await bothWays('strasse straße', defaults);
    await bothWays('abc123 2024', defaults);
    await bothWays('ad', { ...defaults, sort: 'title', order: 'desc', offset: 40 });
    expect((await bothWays('zebra quantum', { ...defaults, category: 'travel' })).total).toBeGreaterThan(0);
    expect((await bothWays('the and of', defaults)).total).toBe(0);
    expect((await bothWays('nonexistentword', defaults)).total).toBe(0);
    // A page past the cap still lists what is there.
    expect((await bothWays('kube', { ...defaults, offset: 1100, limit: 50 })).slugs.length).toBe(50);
  });

  it('agrees on random queries, filters, sorts and pages', async () => {
    const term = fc.oneof(
      fc.constantFrom(...VOCABULARY),
      fc.constantFrom(...VOCABULARY).chain((w) => fc.integer({ min: 1, max: w.length }).map((n) => w.slice(0, n))),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(term, { minLength: 1, maxLength: 3 }),
        fc.option(fc.constantFrom(...CATEGORIES), { nil: null }),
        fc.constantFrom<Sort>('createdAt', 'title'),
        fc.constantFrom<Order>('asc', 'desc'),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 0, max: 30 }),
        async (terms, category, sort, order, limit, page) => {
          const query = terms.join(' ');
          if (toPrefixTsquery(query) === null) return;
          await bothWays(query, { category, sort, order, limit, offset: page * limit });
        },
      ),
      { numRuns: 250, seed: 20261129 },
    );
  }, 120_000);
});

describe('the search index through the API', () => {
  const search = async (app: TestApp['app'] | null, query: string) => {
    const res = app
      ? await app.server.inject({ method: 'GET', url: `/api/agent?query=${encodeURIComponent(query)}` })
      : await t.call({ method: 'GET', url: `/api/agent?query=${encodeURIComponent(query)}`, token: null });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ total: number; results: { slug: string; score: number }[] }>();
  };

  it('answers /api/agent from the index, and a topic written here at once (PostgreSQL answers until the rebuild)', async () => {
    const answered = t.app.agentApi.searchIndex.stats().answered;
    expect((await search(null, 'zebra zones')).total).toBeGreaterThan(0);
    expect(t.app.agentApi.searchIndex.stats().answered).toBe(answered + 1);

    const topic = { slug: 'index-fresh-topic', title: 'Xylophonist workshop', category: 'facts', summary: 'A xylophonist.', body: 'Xylophonists.' };
    expect((await t.call({ method: 'POST', url: `${V1}/agent-api/topics`, payload: { topics: [topic] } })).statusCode).toBe(200);
    // Right after the write: the index built before it does not hold the topic, so finding it
    // means the search did not trust that index (PostgreSQL answered, or a rebuild already had).
    expect((await search(null, 'xylophonist')).results.map((r) => r.slug)).toEqual(['index-fresh-topic']);
    await t.app.agentApi.searchIndex.settled();
    expect(t.app.agentApi.searchIndex.stats().ready).toBe(true);
    const before = t.app.agentApi.searchIndex.stats().answered;
    expect((await search(null, 'xylophonists workshop')).results.map((r) => r.slug)).toEqual(['index-fresh-topic']);
    expect(t.app.agentApi.searchIndex.stats().answered).toBe(before + 1);
  });

  it('sees a topic written on another instance within the poll interval, cached answers included', async () => {
    const other = await t.secondInstance();
    try {
      await other.agentApi.searchIndex.settled();
      expect((await search(other, 'marimba')).total).toBe(0);
      const topic = { slug: 'index-remote-topic', title: 'Marimba tuning', category: 'facts', summary: 'Marimbas.', body: 'Marimba.' };
      expect((await t.call({ method: 'POST', url: `${V1}/agent-api/topics`, payload: { topics: [topic] } })).statusCode).toBe(200);
      const began = Date.now();
      let found = 0;
      while (found === 0 && Date.now() - began < 10_000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        found = (await search(other, 'marimba')).total;
      }
      expect(found).toBe(1);
      // One poll interval, plus slack for a loaded machine.
      expect(Date.now() - began).toBeLessThan(5_000);
    } finally {
      await other.close();
    }
  });

  it('with OBSERVATORY_SEARCH_INDEX=0 builds nothing and every search goes to PostgreSQL', async () => {
    const off = await t.secondInstance({ OBSERVATORY_SEARCH_INDEX: '0' });
    try {
      const res = await search(off, 'kubernetes');
      expect(res.total).toBe(1000);
      expect(off.agentApi.searchIndex.stats()).toMatchObject({ enabled: false, ready: false, topics: 0, answered: 0 });
    } finally {
      await off.close();
    }
  });
});
