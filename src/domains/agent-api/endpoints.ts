import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { unavailable } from '../../platform/errors.ts';
import { buildOpenApi30 } from '../../platform/http/openapi.ts';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, StringEnum, V1 } from '../../platform/http/registry.ts';
import { bodyFields, callField, type Limits } from './caller.ts';
import type { CallRecorder } from './recorder.ts';
import { RECORDED_HEADERS } from './recorder.ts';
import { API_DESCRIPTION, API_NAME, capabilitiesDocument, discoveryDocument, jsonFeed, llmsTxt, PATHS, robotsTxt, rssFeed } from './discovery.ts';
import {
  type AgentApiService,
  BATCH_QUERIES_MAX,
  CATEGORIES,
  PAGE_MAX,
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  TOPICS_LIMIT_DEFAULT,
  TOPICS_LIMIT_MAX,
  UPSERT_TOPICS_MAX,
} from './service.ts';

/**
 * The public agent API (spec B group 6), the operator writes it needs (D6) and the operator reads
 * the console browses topics with. The public routes take no operator credential (`agent-key`):
 * the caller check applies the API key and the rate limit, and every call is recorded as a
 * honeypot event once it has been answered. The operator routes do neither.
 */

export const AGENT_TAG = 'agent-api';
const SLUG = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,127}$', description: 'Lower-case letters, digits and -, up to 128 characters.' });
const CategorySchema = StringEnum(CATEGORIES);

const searchFields = {
  query: Type.String({ minLength: 1, maxLength: 500, description: 'Search terms. Every term must match; each also matches as a word prefix.' }),
  agent_name: Type.Optional(Type.String({ maxLength: 128, description: 'The caller\'s identifier; also part of the anonymous rate-limit key.' })),
  source_url: Type.Optional(Type.String({ maxLength: 2048, description: 'The page the caller was crawling.' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: 1, description: `Page number, 1 to ${PAGE_MAX}.` })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SEARCH_LIMIT_MAX, default: SEARCH_LIMIT_DEFAULT, description: `Results per page, at most ${SEARCH_LIMIT_MAX}.` })),
  sort: Type.Optional(StringEnum(['createdAt', 'title'] as const, { default: 'createdAt' })),
  order: Type.Optional(StringEnum(['asc', 'desc'] as const, { default: 'desc' })),
  category: Type.Optional(CategorySchema),
};
const SearchInput = Type.Object(searchFields, {
  examples: [{ query: 'dns', agent_name: 'example-agent', source_url: 'https://example.com/blog/dns', page: 1, limit: 5, sort: 'createdAt', order: 'desc', category: 'tech' }],
});

const TopicResult = Type.Object({
  slug: Type.String(),
  title: Type.String(),
  category: Type.String(),
  summary: Type.String(),
  url: Type.String({ description: 'The topic\'s page under the bait root /honeypot/topics/.' }),
  createdAt: IsoDate,
  score: Type.Number({ description: 'Relevance in 0..1 (PostgreSQL ts_rank, normalised rank/(rank+1)).' }),
});
const Paging = {
  page: Type.Integer(),
  limit: Type.Integer(),
  total: Type.Integer({ description: 'Every match, across all pages.' }),
  totalPages: Type.Integer(),
  nextPage: Nullable(Type.Integer({ description: 'null on the last page.' })),
};
const SearchPaging = {
  ...Paging,
  total: Type.Integer({ description: 'Every match, counted exactly up to 1,000; beyond that 1,000 with totalExact false.' }),
  totalExact: Type.Boolean({ description: 'false when there are more than 1,000 matches (total is then a lower bound).' }),
  totalPages: Type.Integer({ description: 'ceil(total / limit); a lower bound when totalExact is false.' }),
  nextPage: Nullable(Type.Integer({ description: 'null on the last page (whether a row follows this page decides, not total).' })),
};
const SearchResponse = { schemaId: 'svc-agent-search.v1', fields: { query: Type.String(), results: Type.Array(TopicResult), ...SearchPaging } };
const TopicFull = Type.Object({
  slug: Type.String(),
  title: Type.String(),
  category: Type.String(),
  summary: Type.String(),
  body: Type.String(),
  url: Type.String(),
  createdAt: IsoDate,
  updatedAt: IsoDate,
});

const exampleHit = {
  slug: 'how-dns-resolution-works',
  title: 'How DNS resolution works',
  category: 'tech',
  summary: 'How a name becomes an address.',
  url: 'http://localhost:8080/honeypot/topics/how-dns-resolution-works',
  createdAt: '2025-03-02T10:00:00.000Z',
  score: 0.4276,
};
const { score: _score, ...exampleTopic } = exampleHit;
const searchExample = {
  schema: 'svc-agent-search.v1',
  generatedAt: '2026-11-24T12:00:00.000Z',
  query: 'dns',
  results: [exampleHit],
  page: 1,
  limit: 5,
  total: 1,
  totalExact: true,
  totalPages: 1,
  nextPage: null,
};

/** Browsing topics: the public list's parameters, which the operator list takes too (without `agent_name`). */
const topicsQueryFields = {
  category: Type.Optional(CategorySchema),
  page: searchFields.page,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: TOPICS_LIMIT_MAX, default: TOPICS_LIMIT_DEFAULT, description: `Topics per page, at most ${TOPICS_LIMIT_MAX}.` })),
};
const topicsPageFields = { topics: Type.Array(Type.Omit(TopicResult, ['score'])), ...Paging };
const TopicParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 128 }) }, { examples: [{ slug: 'how-compound-interest-works' }] });
const topicsExample = (schema: string) => ({
  schema,
  generatedAt: '2026-11-24T12:00:00.000Z',
  topics: [exampleTopic],
  page: 1,
  limit: 20,
  total: 1,
  totalPages: 1,
  nextPage: null,
});
const topicExample = (schema: string) => ({
  schema,
  generatedAt: '2026-11-24T12:00:00.000Z',
  topic: { ...exampleTopic, body: 'A resolver asks the root, then the TLD, then the authoritative server.', updatedAt: '2025-03-02T10:00:00.000Z' },
});

/** The recording hook: what a call was, as a honeypot event (the query string holds a POST body's fields). */
export function recordCall(recorder: CallRecorder) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const [path, rawQuery] = splitUrl(request.url);
    const body = bodyFields(request);
    const query = body ? bodyAsQuery(body) : rawQuery;
    const headers: Record<string, string> = {};
    for (const name of RECORDED_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value.slice(0, 8192);
    }
    const referer = callField(request, 'source_url') ?? request.headers.referer ?? null;
    recorder.push({
      method: request.method,
      path: path.slice(0, 2048),
      query: query === null ? null : query.slice(0, 4096),
      ua: (request.headers['user-agent'] ?? '').slice(0, 2048),
      ip: request.ip,
      referer: referer === null ? null : referer.slice(0, 2048),
      headers,
    });
  };
}

function splitUrl(url: string): [string, string | null] {
  const at = url.indexOf('?');
  return at < 0 ? [url, null] : [url.slice(0, at), url.slice(at + 1)];
}

/** A JSON body's scalar (and string-array) fields as a query string, so every recorded call reads alike. */
function bodyAsQuery(body: Record<string, unknown>): string | null {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(body)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') params.append(name, String(item));
    }
  }
  const text = params.toString();
  return text === '' ? null : text;
}

export function agentApiEndpoints(deps: {
  service: AgentApiService;
  recorder: CallRecorder;
  checkCaller: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  limits: Limits;
  baseUrl: string;
  /** Every endpoint of the registry; the OpenAPI 3.0 document describes this group's. */
  endpoints: () => readonly Endpoint[];
  /** The `agent-api-search` runtime flag (platform/faults/flags.ts): off, the searches answer 503. */
  searchEnabled?: () => boolean;
}): Endpoint[] {
  const { service, limits, baseUrl } = deps;
  const searchEnabled = deps.searchEnabled ?? (() => true);
  // Checked in the handler, after the caller check: a call to a switched-off search still counts
  // against the caller's rate limit and is recorded as a honeypot event like any other.
  const assertSearchOn = () => {
    if (!searchEnabled()) throw unavailable('Topic search is switched off for the moment; browsing topics (GET /api/topics) still works. Try the search again in a few minutes.');
  };
  const publicRoute = { auth: 'agent-key' as const, scope: null, tag: AGENT_TAG, kind: 'read' as const, verifyCaller: deps.checkCaller, onResponse: recordCall(deps.recorder) };
  let openapi: unknown = null;
  // The documents depend on configuration only: built once.
  const discovery = discoveryDocument(baseUrl, limits);
  const robots = robotsTxt(baseUrl);
  const llms = llmsTxt(baseUrl, limits, CATEGORIES);
  const rawJson = (schema: TSchema) => ({ raw: schema, contentType: 'application/json' });

  return [
    defineEndpoint({
      ...publicRoute,
      id: 'searchTopics',
      title: 'Search topics',
      description: `Full-text topic search. \`query\` is required; \`limit\` defaults to ${SEARCH_LIMIT_DEFAULT} and is at most ${SEARCH_LIMIT_MAX}; results are sorted by \`createdAt\` (default) or \`title\`, each with a relevance score. Anonymous callers get ${limits.anonymousPerMinute} calls per minute per (IP, agent_name) and ${limits.ipPerMinute} per IP across all agent_name values; an API key gets ${limits.keyPerMinute}.`,
      method: 'GET',
      path: PATHS.search,
      query: SearchInput,
      response: SearchResponse,
      example: searchExample,
      handler: async ({ query }) => {
        assertSearchOn();
        return service.search(query);
      },
    }),
    defineEndpoint({
      ...publicRoute,
      id: 'searchTopicsPost',
      title: 'Search topics (JSON body)',
      description: 'The same search as GET /api/agent with its fields sent as a JSON body.',
      method: 'POST',
      path: PATHS.search,
      body: SearchInput,
      response: SearchResponse,
      example: searchExample,
      handler: async ({ body }) => {
        assertSearchOn();
        return service.search(body, 'body.query');
      },
    }),
    defineEndpoint({
      ...publicRoute,
      id: 'searchTopicsBatch',
      title: 'Search several queries at once',
      description: `Up to ${BATCH_QUERIES_MAX} queries in one call; each answers its first page. Each query counts as one call against the rate limit.`,
      method: 'POST',
      path: PATHS.batch,
      body: Type.Object({
        queries: Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { minItems: 1, maxItems: BATCH_QUERIES_MAX }),
        agent_name: searchFields.agent_name,
        source_url: searchFields.source_url,
        limit: searchFields.limit,
        category: searchFields.category,
      }, { examples: [{ queries: ['dns', 'index fund'], agent_name: 'example-agent', source_url: 'https://example.com/blog/dns', limit: 5, category: 'tech' }] }),
      response: {
        schemaId: 'svc-agent-search-batch.v1',
        fields: {
          results: Type.Array(Type.Object({ query: Type.String(), total: Type.Integer(), results: Type.Array(TopicResult), nextPage: Nullable(Type.Integer()) })),
        },
      },
      example: { schema: 'svc-agent-search-batch.v1', generatedAt: '2026-11-24T12:00:00.000Z', results: [{ query: 'dns', total: 1, results: [exampleHit], nextPage: null }] },
      handler: async ({ body }) => {
        assertSearchOn();
        return { results: await service.batch(body) };
      },
    }),
    defineEndpoint({
      ...publicRoute,
      id: 'listTopics',
      title: 'Browse topics',
      description: `Topics newest first, optionally of one category; \`limit\` defaults to ${TOPICS_LIMIT_DEFAULT}, at most ${TOPICS_LIMIT_MAX}.`,
      method: 'GET',
      path: PATHS.topics,
      query: Type.Object({ ...topicsQueryFields, agent_name: searchFields.agent_name }, { examples: [{ category: 'finance', page: 1, limit: 20, agent_name: 'example-agent' }] }),
      response: { schemaId: 'svc-agent-topics.v1', fields: topicsPageFields },
      example: topicsExample('svc-agent-topics.v1'),
      handler: async ({ query }) => service.listTopics(query),
    }),
    defineEndpoint({
      ...publicRoute,
      id: 'getTopic',
      title: 'One topic',
      description: 'A topic with its body; 404 for an unknown slug.',
      method: 'GET',
      path: PATHS.topic,
      params: TopicParams,
      errors: [404],
      response: { schemaId: 'svc-agent-topic.v1', fields: { topic: TopicFull } },
      example: topicExample('svc-agent-topic.v1'),
      handler: async ({ params }) => ({ topic: await service.topic(params.slug) }),
    }),
    defineEndpoint<never, never, never, never, true>({
      ...publicRoute,
      id: 'getAgentOpenApi',
      title: 'OpenAPI 3.0 description of the agent API',
      description: 'OpenAPI 3.0.3, derived from the same endpoint registry as the versioned API\'s 3.1 document; it describes this group only.',
      method: 'GET',
      path: PATHS.openapi,
      response: rawJson(Type.Object({ openapi: Type.String(), info: Type.Object({ title: Type.String(), version: Type.String() }) }, { additionalProperties: true })),
      example: { openapi: '3.0.3', info: { title: API_NAME, version: '1.0.0' } },
      handler: async () =>
        (openapi ??= buildOpenApi30(
          deps.endpoints().filter((e) => e.tag === AGENT_TAG && e.auth === 'agent-key'),
          { title: API_NAME, version: '1.0.0', description: API_DESCRIPTION, baseUrl },
        )),
    }),
    defineEndpoint({
      ...publicRoute,
      id: 'getAgentCapabilities',
      title: 'Agent API capabilities',
      description: 'Supported features, parameters, limits and topic counts per category.',
      method: 'GET',
      path: PATHS.capabilities,
      response: {
        schemaId: 'svc-agent-capabilities.v1',
        fields: {
          features: Type.Array(Type.String()),
          search: Type.Object({}, { additionalProperties: true }),
          topics: Type.Object({}, { additionalProperties: true }),
          categories: Type.Array(Type.Object({ name: Type.String(), topics: Type.Integer() })),
          authentication: Type.Object({}, { additionalProperties: true }),
          rateLimits: Type.Object({}, { additionalProperties: true }),
        },
      },
      example: { schema: 'svc-agent-capabilities.v1', generatedAt: '2026-11-24T12:00:00.000Z', ...capabilitiesDocument(limits, [{ category: 'tech', topics: 44 }]) },
      handler: async () => capabilitiesDocument(limits, await service.categoryCounts()),
    }),
    defineEndpoint<never, never, never, never, true>({
      ...publicRoute,
      id: 'getAgentDiscovery',
      title: 'Agent API discovery document',
      description: 'Where the search, topics, feeds, OpenAPI document and llms.txt are, how to authenticate and the rate limits.',
      method: 'GET',
      path: PATHS.wellKnown,
      response: rawJson(Type.Object({ name: Type.String(), openapi: Type.String() }, { additionalProperties: true })),
      example: discoveryDocument('http://localhost:8080', limits),
      handler: async () => discovery,
    }),
    defineEndpoint<never, never, never, never, true>({
      ...publicRoute,
      id: 'getAgentRssFeed',
      title: 'Newest topics as RSS 2.0',
      description: 'The 50 newest topics, RSS 2.0 (written by the feed library).',
      method: 'GET',
      path: PATHS.rss,
      response: { raw: Type.String(), contentType: 'application/rss+xml; charset=utf-8' },
      example: '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0">…</rss>',
      handler: async () => rssFeed(baseUrl, await service.newest()),
    }),
    defineEndpoint<never, never, never, never, true>({
      ...publicRoute,
      id: 'getAgentJsonFeed',
      title: 'Newest topics as JSON Feed 1.1',
      description: 'The 50 newest topics, JSON Feed 1.1.',
      method: 'GET',
      path: PATHS.jsonFeed,
      response: { raw: Type.String(), contentType: 'application/feed+json; charset=utf-8' },
      example: '{"version":"https://jsonfeed.org/version/1.1","title":"Observatory Topic Search","items":[]}',
      handler: async () => JSON.stringify(jsonFeed(baseUrl, await service.newest())),
    }),
    defineEndpoint<never, never, never, never, true>({
      ...publicRoute,
      id: 'getRobotsTxt',
      title: 'robots.txt',
      description: 'Points crawlers at the API, its OpenAPI document and llms.txt.',
      method: 'GET',
      path: PATHS.robots,
      response: { raw: Type.String(), contentType: 'text/plain; charset=utf-8' },
      example: robotsTxt('http://localhost:8080'),
      handler: async () => robots,
    }),
    defineEndpoint<never, never, never, never, true>({
      ...publicRoute,
      id: 'getLlmsTxt',
      title: 'llms.txt',
      description: 'A Markdown guide for language models (llmstxt.org layout) to the API and feeds.',
      method: 'GET',
      path: PATHS.llms,
      response: { raw: Type.String(), contentType: 'text/markdown; charset=utf-8' },
      example: llmsTxt('http://localhost:8080', limits, CATEGORIES),
      handler: async () => llms,
    }),

    // Operator reads: the same topics for the console, with an operator credential. They pass no
    // caller check and have no recording hook, so an operator's browsing is neither a honeypot
    // event nor counted against the public rate limit.
    defineEndpoint({
      id: 'listAgentApiTopics',
      title: 'Browse agent API topics (operator)',
      description: `The public browse list (GET /api/topics) for operators: topics newest first, optionally of one category; \`limit\` defaults to ${TOPICS_LIMIT_DEFAULT}, at most ${TOPICS_LIMIT_MAX}. Unlike the public route it is not recorded as a honeypot event and not rate limited as an agent. Scope \`read:tenants\`: the topics are the bait of the agent API's recording tenant, written with \`write:tenants\` (POST {v1}/agent-api/topics).`,
      method: 'GET',
      path: `${V1}/agent-api/topics`,
      uiPath: '/agent-api',
      auth: 'session-or-bearer',
      scope: 'read:tenants',
      tag: AGENT_TAG,
      kind: 'read',
      query: Type.Object(topicsQueryFields, { examples: [{ category: 'finance', page: 1, limit: 20 }] }),
      response: { schemaId: 'svc-agent-api-topics.v1', fields: topicsPageFields },
      example: topicsExample('svc-agent-api-topics.v1'),
      handler: async ({ query }) => service.listTopics(query),
    }),
    defineEndpoint({
      id: 'getAgentApiTopic',
      title: 'One agent API topic (operator)',
      description: 'A topic with its body, as GET /api/topics/{slug} answers it, for operators; 404 `not-found` for an unknown slug. Not recorded as a honeypot event, not rate limited as an agent; scope `read:tenants` like the list.',
      method: 'GET',
      path: `${V1}/agent-api/topics/{slug}`,
      uiPath: '/agent-api',
      auth: 'session-or-bearer',
      scope: 'read:tenants',
      tag: AGENT_TAG,
      kind: 'read',
      params: TopicParams,
      errors: [404],
      response: { schemaId: 'svc-agent-api-topic.v1', fields: { topic: TopicFull } },
      example: topicExample('svc-agent-api-topic.v1'),
      handler: async ({ params }) => ({ topic: await service.topic(params.slug) }),
    }),

    // Operator writes (D6)
    defineEndpoint({
      id: 'upsertAgentTopics',
      title: 'Upsert agent API topics',
      description: `Inserts or replaces up to ${UPSERT_TOPICS_MAX} topics by slug, in one transaction; audited. \`createdAt\` defaults to now.`,
      method: 'POST',
      path: `${V1}/agent-api/topics`,
      uiPath: '/agent-api',
      auth: 'session-or-bearer',
      scope: 'write:tenants',
      tag: AGENT_TAG,
      kind: 'write',
      body: Type.Object({
        topics: Type.Array(
          Type.Object({
            slug: SLUG,
            title: Type.String({ minLength: 1, maxLength: 300 }),
            category: CategorySchema,
            summary: Type.String({ minLength: 1, maxLength: 1000 }),
            body: Type.String({ minLength: 1, maxLength: 50_000 }),
            createdAt: Type.Optional(IsoDate),
          }),
          { minItems: 1, maxItems: UPSERT_TOPICS_MAX },
        ),
      }, {
        examples: [
          {
            topics: [
              {
                slug: 'what-is-dns-over-https',
                title: 'What is DNS over HTTPS?',
                category: 'tech',
                summary: 'DNS queries sent inside HTTPS, so the network in between cannot read or change them.',
                body: 'DNS over HTTPS (DoH) sends each DNS query as an HTTPS request to a resolver...',
                createdAt: '2026-11-24T12:00:00.000Z',
              },
            ],
          },
        ],
      }),
      response: { schemaId: 'svc-agent-topics-upsert.v1', fields: { ok: Type.Boolean(), upserted: Type.Integer(), inserted: Type.Integer(), updated: Type.Integer() } },
      example: { schema: 'svc-agent-topics-upsert.v1', generatedAt: '2026-11-24T12:00:00.000Z', ok: true, upserted: 2, inserted: 1, updated: 1 },
      handler: async ({ body, principal, requestId }) => ({ ok: true, ...(await service.upsertTopics({ principal: principal!, requestId }, body.topics)) }),
    }),
    defineEndpoint({
      id: 'createAgentApiKey',
      title: 'Create an agent API key',
      description: `Issues a key for the public agent API (${limits.keyPerMinute} calls per minute instead of ${limits.anonymousPerMinute}); the plaintext is returned once, only its hash is kept; audited.`,
      method: 'POST',
      path: `${V1}/agent-api/keys`,
      uiPath: '/agent-api',
      auth: 'session-or-bearer',
      scope: 'write:tokens',
      tag: AGENT_TAG,
      kind: 'write',
      body: Type.Object({
        name: Type.String({ minLength: 1, maxLength: 200 }),
        plan: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,31}$', default: 'paid', description: 'A label for the plan; every plan gets the key rate limit.' })),
      }, { examples: [{ name: 'Example Research Crawler', plan: 'paid' }] }),
      response: {
        schemaId: 'svc-agent-api-key.v1',
        fields: { id: Type.String({ format: 'uuid' }), key: Type.String({ description: 'Shown once.' }), prefix: Type.String(), plan: Type.String(), name: Type.String(), createdAt: IsoDate },
      },
      example: {
        schema: 'svc-agent-api-key.v1',
        generatedAt: '2026-11-24T12:00:00.000Z',
        id: '7d1c5a2e-3b7f-4e1a-9a55-0c7f1e2d3b4a',
        key: 'agk_Zp9wH1u0y1m3kq8v5c2x7b4n6a0s9d8f',
        prefix: 'agk_Zp9wH1',
        plan: 'paid',
        name: 'Research crawler',
        createdAt: '2026-11-24T12:00:00.000Z',
      },
      handler: async ({ body, principal, requestId }) => service.createKey({ principal: principal!, requestId }, body),
    }),
  ];
}
