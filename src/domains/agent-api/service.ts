import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { actorOf, type AuditLog, type CallContext } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import { randomToken, sha256Hex } from '../../platform/crypto.ts';
import type { Db } from '../../platform/db/client.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { assertThat, badRequest, notFound } from '../../platform/errors.ts';
import { createClockCache } from '../../platform/memo.ts';
import * as repo from './repository.ts';
import { shownScore } from './search-index/rank.ts';
import type { SearchIndex } from './search-index/service.ts';
import { prefixTsqueryOf, queryTerms } from './search-query.ts';

/**
 * The public agent API's rules (docs/agent-api/README.md): topic search with paging, batch search,
 * browsing, the seed corpus, topic upserts and API keys. No HTTP here, no SQL.
 */

export const CATEGORIES = ['tech', 'finance', 'travel', 'health', 'facts'] as const;
export type Category = (typeof CATEGORIES)[number];
export const SEARCH_LIMIT_DEFAULT = 5;
export const SEARCH_LIMIT_MAX = 50;
/** Pages beyond this are refused: nobody reads result 50,000, and deep OFFSETs cost the database. */
export const PAGE_MAX = 1000;
export const BATCH_QUERIES_MAX = 10;
export const TOPICS_LIMIT_DEFAULT = 20;
export const TOPICS_LIMIT_MAX = 50;
export const FEED_ITEMS = 50;
export const UPSERT_TOPICS_MAX = 1000;
/** The bait root that topic URLs live under (one of the sitemap's generated roots). */
export const TOPIC_ROOT = '/honeypot/topics/';
/**
 * Search answers are remembered this long, and forgotten at once when this instance upserts
 * topics; another instance's upsert shows within this time. Topics change rarely (operator
 * upserts), and an uncached search costs the database milliseconds (docs/performance.md).
 */
export const SEARCH_CACHE_TTL_MS = 60_000;
export const API_KEY_PREFIX = 'agk_';

const SEED_FILES = CATEGORIES.map((category) => new URL(`./seed/${category}.json`, import.meta.url));

export interface SearchParams {
  query: string;
  category?: Category | undefined;
  page?: number | undefined;
  limit?: number | undefined;
  sort?: repo.SortField | undefined;
  order?: repo.SortOrder | undefined;
}

export interface TopicResult {
  slug: string;
  title: string;
  category: string;
  summary: string;
  url: string;
  createdAt: string;
  score: number;
}

export interface SearchPage {
  query: string;
  results: TopicResult[];
  page: number;
  limit: number;
  total: number;
  totalExact: boolean;
  totalPages: number;
  nextPage: number | null;
}

/** A search answer as the cache keeps it: results ready to send. */
interface Found {
  results: TopicResult[];
  hasMore: boolean;
  total: number;
  totalExact: boolean;
}
const NOTHING_FOUND: Found = { results: [], hasMore: false, total: 0, totalExact: true };

export interface TopicInput {
  slug: string;
  title: string;
  category: Category;
  summary: string;
  body: string;
  createdAt?: string | undefined;
}

export interface ResolvedKey {
  id: string;
  plan: string;
}

export function createAgentApiService(deps: { db: Db; clock: Clock; audit: AuditLog; publicUrl: string; searchIndex?: SearchIndex }) {
  const { db, clock, audit } = deps;
  const topicUrl = (slug: string) => `${deps.publicUrl}${TOPIC_ROOT}${slug}`;
  const searchCache = createClockCache<string, Found>({ max: 20_000, ttlMs: SEARCH_CACHE_TTL_MS, clock });
  // Concurrent identical searches that miss the cache share one database round trip.
  const inFlight = new Map<string, Promise<Found>>();
  // misses: searches sent to the database; joined: misses that waited for an identical one in flight.
  const cacheStats = { hits: 0, misses: 0, joined: 0 };
  let cacheVersion = 0;

  /** A topic as results list it: no body, its URL under the bait root. */
  function listed(topic: { slug: string; title: string; category: string; summary: string; createdAt: Date }): Omit<TopicResult, 'score'> {
    return { slug: topic.slug, title: topic.title, category: topic.category, summary: topic.summary, url: topicUrl(topic.slug), createdAt: topic.createdAt.toISOString() };
  }

  function toResult(hit: repo.TopicHit): TopicResult {
    return { ...listed(hit), score: Math.round(hit.score * 10_000) / 10_000 };
  }

  /**
   * Reads every public call may repeat (feed items, category counts), remembered like search
   * answers: for the cache's lifetime, and forgotten when this instance upserts topics.
   */
  const derived = createClockCache<string, { value: unknown }>({ max: 10, ttlMs: SEARCH_CACHE_TTL_MS, clock });
  async function remembered<T>(key: string, load: () => Promise<T>): Promise<T> {
    const known = derived.get(key);
    if (known) return known.value as T;
    const version = cacheVersion;
    const value = await load();
    if (version === cacheVersion) derived.set(key, { value });
    return value;
  }

  /** One search's answer: from the in-process index when it can answer, else from PostgreSQL. */
  async function lookUp(args: repo.SearchArgs, terms: readonly string[]): Promise<Found> {
    const indexed = deps.searchIndex ? await deps.searchIndex.find({ ...args, terms, totalCap: repo.SEARCH_TOTAL_CAP }) : null;
    if (indexed) {
      return {
        results: indexed.hits.map((h) => ({ ...listed({ ...h, createdAt: new Date(h.createdAtMs) }), score: shownScore(h.rank) })),
        hasMore: indexed.hasMore,
        total: indexed.total,
        totalExact: indexed.totalExact,
      };
    }
    const r = await repo.searchTopics(db, args);
    return { results: r.hits.map(toResult), hasMore: r.hasMore, total: r.total, totalExact: r.totalExact };
  }

  /** `field` names the query in a 400: `query.query` (GET) or `body.query` (POST). */
  async function search(params: SearchParams, field = 'query.query'): Promise<SearchPage> {
    const query = params.query.trim();
    if (query === '') throw badRequest(field.startsWith('body') ? 'invalid-body' : 'invalid-query', `${field} must contain something to search for.`, { field });
    const page = params.page ?? 1;
    const limit = params.limit ?? SEARCH_LIMIT_DEFAULT;
    const terms = queryTerms(query);
    const tsquery = prefixTsqueryOf(terms);
    let found: Found = NOTHING_FOUND;
    if (tsquery !== null) {
      const args: repo.SearchArgs = {
        tsquery,
        category: params.category ?? null,
        sort: params.sort ?? 'createdAt',
        order: params.order ?? 'desc',
        limit,
        offset: (page - 1) * limit,
      };
      const cacheKey = `${args.sort}|${args.order}|${args.category ?? ''}|${limit}|${args.offset}|${tsquery}`;
      const cached = searchCache.get(cacheKey);
      if (cached) {
        cacheStats.hits += 1;
        found = cached;
      } else {
        let pending = inFlight.get(cacheKey);
        if (pending) cacheStats.joined += 1;
        else {
          cacheStats.misses += 1;
          const version = cacheVersion;
          pending = lookUp(args, terms)
            .then((answer) => {
              // An upsert that landed meanwhile may have changed the answer: do not remember it.
              if (version === cacheVersion) searchCache.set(cacheKey, answer);
              return answer;
            })
            .finally(() => inFlight.delete(cacheKey));
          inFlight.set(cacheKey, pending);
        }
        found = await pending;
      }
    }
    return {
      query,
      results: found.results,
      page,
      limit,
      total: found.total,
      totalExact: found.totalExact,
      totalPages: Math.ceil(found.total / limit),
      nextPage: found.hasMore && page < PAGE_MAX ? page + 1 : null,
    };
  }

  /** Drops remembered answers: topics changed here or, as the search index's poll saw, elsewhere. */
  function forgetAnswers() {
    searchCache.clear();
    derived.clear();
    cacheVersion += 1;
  }

  return {
    search,
    forgetAnswers,
    /** Search cache hits, misses and misses joined to one in flight, since start (the bench reports them). */
    cacheStats: () => ({ ...cacheStats }),

    /** Each query's first page, in the order given; at most BATCH_QUERIES_MAX queries. */
    async batch(input: { queries: string[]; category?: Category | undefined; limit?: number | undefined }) {
      const blank = input.queries.findIndex((q) => q.trim() === '');
      if (blank >= 0) throw badRequest('invalid-body', `body.queries[${blank}] must contain something to search for.`, { field: `body.queries[${blank}]` });
      const pages = [];
      for (const query of input.queries) pages.push(await search({ query, category: input.category, limit: input.limit }, 'body.queries'));
      return pages.map((p) => ({ query: p.query, total: p.total, results: p.results, nextPage: p.nextPage }));
    },

    /** Browsing, for the public route and the operator one alike (a read: nothing recorded here). */
    async listTopics(input: { category?: Category | undefined; page?: number | undefined; limit?: number | undefined }) {
      const page = input.page ?? 1;
      const limit = input.limit ?? TOPICS_LIMIT_DEFAULT;
      const { rows, total } = await repo.listTopics(db, { category: input.category ?? null, limit, offset: (page - 1) * limit });
      const totalPages = Math.ceil(total / limit);
      return {
        topics: rows.map(listed),
        page,
        limit,
        total,
        totalPages,
        nextPage: page < totalPages && page < PAGE_MAX ? page + 1 : null,
      };
    },

    async topic(slug: string) {
      const row = await repo.findTopic(db, slug);
      assertThat(row, notFound(`There is no topic ${slug}.`));
      return { ...row, url: topicUrl(row.slug), createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() };
    },

    /** The newest topics, for the feeds. */
    newest: () => remembered('newest', async () => (await repo.newestTopics(db, FEED_ITEMS)).map((r) => ({ ...r, url: topicUrl(r.slug) }))),

    categoryCounts: () => remembered('category-counts', () => repo.countByCategory(db)),

    /** Upserts by slug in one transaction, audited; returns how many were written and which were new. */
    async upsertTopics(ctx: CallContext, topics: TopicInput[]) {
      const seen = new Set<string>();
      topics.forEach((t, i) => {
        if (seen.has(t.slug)) throw badRequest('invalid-body', `body.topics[${i}].slug repeats ${t.slug}; each slug may appear once per call.`, { field: `body.topics[${i}].slug` });
        seen.add(t.slug);
      });
      const now = clock.now();
      const rows: repo.TopicWrite[] = topics.map((t) => ({
        slug: t.slug,
        title: t.title.trim(),
        category: t.category,
        summary: t.summary.trim(),
        body: t.body.trim(),
        createdAt: t.createdAt === undefined ? now : new Date(t.createdAt),
      }));
      const { inserted } = await withTransaction(db, async (tx) => {
        const written = await repo.upsertTopics(tx, rows, now);
        await audit.record(tx, {
          verb: 'agent-api.topics-upsert',
          target: 'agent-api:topics',
          surface: 'api',
          actor: actorOf(ctx.principal),
          after: { upserted: rows.length, inserted: written.inserted.length, slugs: rows.slice(0, 100).map((r) => r.slug) },
          requestId: ctx.requestId,
        });
        return written;
      });
      deps.searchIndex?.topicsChanged();
      forgetAnswers();
      return { upserted: rows.length, inserted: inserted.length, updated: rows.length - inserted.length };
    },

    /** Issues an API key; its plaintext is returned here once and only its hash is kept. */
    async createKey(ctx: CallContext, input: { name: string; plan?: string | undefined }) {
      const plaintext = `${API_KEY_PREFIX}${randomToken(24)}`;
      const row: repo.ApiKeyRow = {
        id: randomUUID(),
        name: input.name.trim(),
        plan: input.plan ?? 'paid',
        prefix: plaintext.slice(0, API_KEY_PREFIX.length + 6),
        keyHash: sha256Hex(plaintext),
        createdBy: ctx.principal.userId,
        createdAt: clock.now(),
        revokedAt: null,
      };
      await withTransaction(db, async (tx) => {
        await repo.insertApiKey(tx, row);
        await audit.record(tx, {
          verb: 'agent-api.key-create',
          target: `agent-api-key:${row.id}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          after: { id: row.id, name: row.name, plan: row.plan, prefix: row.prefix },
          requestId: ctx.requestId,
        });
      });
      return { id: row.id, key: plaintext, prefix: row.prefix, plan: row.plan, name: row.name, createdAt: row.createdAt.toISOString() };
    },

    /**
     * The key a caller presented, or null when it is unknown or revoked. One database read each
     * time: the caller check (caller.ts) remembers answers and rations lookups per address.
     */
    async resolveKey(plaintext: string): Promise<ResolvedKey | null> {
      const row = await repo.findApiKeyByHash(db, sha256Hex(plaintext));
      return row && row.revokedAt === null ? { id: row.id, plan: row.plan } : null;
    },

    /**
     * Loads the shipped seed corpus on the first start of a database (a marker row makes it once,
     * even with several instances starting together; later starts read no file); topics already
     * stored under a seed slug are left as they are. Returns how many topics it inserted.
     */
    async ensureSeedCorpus(): Promise<number> {
      const now = clock.now();
      return withTransaction(db, async (tx) => {
        if (!(await repo.claimMarker(tx, 'seed-corpus-v1', now))) return 0;
        return repo.insertMissingTopics(tx, loadSeedCorpus(), now);
      });
    },
  };
}

export type AgentApiService = ReturnType<typeof createAgentApiService>;

interface SeedTopic {
  slug: string;
  title: string;
  category: string;
  summary: string;
  body: string;
  createdAt: string;
}

/** The shipped corpus (src/domains/agent-api/seed/<category>.json), checked as it is read. */
export function loadSeedCorpus(): repo.TopicWrite[] {
  const topics: repo.TopicWrite[] = [];
  for (const file of SEED_FILES) {
    for (const t of JSON.parse(readFileSync(file, 'utf8')) as SeedTopic[]) {
      if (!(CATEGORIES as readonly string[]).includes(t.category) || Number.isNaN(Date.parse(t.createdAt))) {
        throw new Error(`seed topic ${t.slug} in ${file.pathname} has a bad category or createdAt`);
      }
      topics.push({ slug: t.slug, title: t.title, category: t.category, summary: t.summary, body: t.body, createdAt: new Date(t.createdAt) });
    }
  }
  return topics;
}
