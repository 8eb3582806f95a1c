import { Feed } from 'feed';
import { type Limits, UNKNOWN_KEY_LOOKUPS_PER_MINUTE } from './caller.ts';
import { BATCH_QUERIES_MAX, CATEGORIES, PAGE_MAX, SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, TOPICS_LIMIT_MAX } from './service.ts';

/**
 * The documents that let agents find and use the public API: the discovery document, the
 * capabilities, robots.txt, llms.txt and the two feeds. Pure: each takes what it shows.
 */

export const API_NAME = 'Observatory Topic Search';
export const API_DESCRIPTION =
  'Search short reference topics on technology, finance, travel, health and general facts. Free without a key; an API key raises the rate limit.';

export interface FeedTopic {
  slug: string;
  title: string;
  category: string;
  summary: string;
  body: string;
  url: string;
  createdAt: Date;
  updatedAt: Date;
}

export const PATHS = {
  search: '/api/agent',
  batch: '/api/agent/batch',
  topics: '/api/topics',
  topic: '/api/topics/{slug}',
  openapi: '/api/openapi.json',
  capabilities: '/api/capabilities',
  wellKnown: '/.well-known/agent-api',
  rss: '/feed.xml',
  jsonFeed: '/feed.json',
  robots: '/robots.txt',
  llms: '/llms.txt',
} as const;

function rateLimits(limits: Limits) {
  return {
    anonymous: { requests: limits.anonymousPerMinute, perSeconds: 60, key: 'caller IP and agent_name' },
    anonymousPerAddress: { requests: limits.ipPerMinute, perSeconds: 60, key: 'caller IP (IPv6: its /64), across all agent_name values' },
    apiKey: { requests: limits.keyPerMinute, perSeconds: 60, key: 'API key' },
    unknownApiKeys: { requests: UNKNOWN_KEY_LOOKUPS_PER_MINUTE, perSeconds: 60, key: 'caller IP (IPv6: its /64)', note: 'presented keys that are unknown or revoked' },
    headers: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'],
    batchCost: 'one request per query in the batch',
  };
}

const authentication = {
  anonymous: true,
  apiKey: { headers: ['Authorization: Bearer <API_KEY>', 'X-API-Key: <API_KEY>'], effect: 'raises the rate limit' },
};

/** `/.well-known/agent-api`: where everything is, in one small document. */
export function discoveryDocument(baseUrl: string, limits: Limits) {
  const at = (path: string) => `${baseUrl}${path}`;
  return {
    name: API_NAME,
    description: API_DESCRIPTION,
    version: '1.0.0',
    openapi: at(PATHS.openapi),
    capabilities: at(PATHS.capabilities),
    endpoints: {
      search: { method: 'GET', url: at(PATHS.search), alsoPost: true, required: ['query'] },
      batch: { method: 'POST', url: at(PATHS.batch), maxQueries: BATCH_QUERIES_MAX },
      topics: { method: 'GET', url: at(PATHS.topics) },
      topic: { method: 'GET', url: at(PATHS.topic) },
    },
    feeds: { rss: at(PATHS.rss), json: at(PATHS.jsonFeed) },
    documentation: { llms: at(PATHS.llms), robots: at(PATHS.robots) },
    authentication,
    rateLimits: rateLimits(limits),
  };
}

/** `/api/capabilities`: what the API supports, with the live topic counts. */
export function capabilitiesDocument(limits: Limits, counts: { category: string; topics: number }[]) {
  const byCategory = new Map(counts.map((c) => [c.category, c.topics]));
  return {
    features: ['full-text-search', 'prefix-matching', 'relevance-score', 'paging', 'category-filter', 'sorting', 'batch-search', 'topic-browse', 'rss-feed', 'json-feed', 'openapi'],
    search: {
      parameters: ['query', 'agent_name', 'source_url', 'page', 'limit', 'sort', 'order', 'category'],
      limit: { default: SEARCH_LIMIT_DEFAULT, max: SEARCH_LIMIT_MAX },
      page: { default: 1, max: PAGE_MAX },
      sort: ['createdAt', 'title'],
      order: ['asc', 'desc'],
      matching: 'every term must match; each term also matches as a word prefix; English stemming',
      batchMaxQueries: BATCH_QUERIES_MAX,
    },
    topics: { limit: { default: 20, max: TOPICS_LIMIT_MAX } },
    categories: CATEGORIES.map((name) => ({ name, topics: byCategory.get(name) ?? 0 })),
    authentication,
    rateLimits: rateLimits(limits),
  };
}

export function robotsTxt(baseUrl: string): string {
  return [
    '# Agents: use the topic search API instead of crawling pages.',
    `# API description: ${baseUrl}${PATHS.openapi}`,
    `# Discovery: ${baseUrl}${PATHS.wellKnown}`,
    `# For language models: ${baseUrl}${PATHS.llms}`,
    'User-agent: *',
    'Allow: /api/',
    'Allow: /.well-known/agent-api',
    'Allow: /llms.txt',
    'Allow: /feed.xml',
    'Allow: /feed.json',
    'Disallow: /api/observatory/',
    '',
  ].join('\n');
}

/** `/llms.txt` in the llmstxt.org layout: a title, a one-line summary, then sections of links. */
export function llmsTxt(baseUrl: string, limits: Limits, categories: readonly string[]): string {
  const at = (path: string) => `${baseUrl}${path}`;
  return [
    `# ${API_NAME}`,
    '',
    `> ${API_DESCRIPTION}`,
    '',
    `Call \`GET ${at(PATHS.search)}?query=<terms>&agent_name=<your agent>\` (or POST the same fields as JSON). ` +
      `Results carry slug, title, category, summary, url, createdAt and a relevance score, with page, limit, total and nextPage. ` +
      `Categories: ${categories.join(', ')}. Without a key: ${limits.anonymousPerMinute} requests per minute per caller and agent_name, ${limits.ipPerMinute} per caller in all; ` +
      `with a key (Authorization: Bearer or X-API-Key): ${limits.keyPerMinute} per minute.`,
    '',
    '## API',
    '',
    `- [OpenAPI description](${at(PATHS.openapi)}): every endpoint, parameter and response`,
    `- [Discovery document](${at(PATHS.wellKnown)}): endpoints, authentication and rate limits`,
    `- [Capabilities](${at(PATHS.capabilities)}): supported features and topic counts`,
    `- [Search](${at(PATHS.search)}?query=example): full-text topic search`,
    `- [Topics](${at(PATHS.topics)}): browse topics by category`,
    '',
    '## Feeds',
    '',
    `- [RSS 2.0](${at(PATHS.rss)}): the newest topics`,
    `- [JSON Feed 1.1](${at(PATHS.jsonFeed)}): the newest topics`,
    '',
  ].join('\n');
}

function buildFeed(baseUrl: string, topics: readonly FeedTopic[]): Feed {
  const feed = new Feed({
    title: API_NAME,
    description: API_DESCRIPTION,
    id: `${baseUrl}/`,
    link: `${baseUrl}/`,
    language: 'en',
    updated: topics.reduce<Date>((latest, t) => (t.updatedAt > latest ? t.updatedAt : latest), new Date(0)),
    generator: 'Observatory',
    copyright: 'Observatory',
    feedLinks: { rss: `${baseUrl}${PATHS.rss}`, json: `${baseUrl}${PATHS.jsonFeed}` },
  });
  for (const topic of topics) {
    feed.addItem({
      title: topic.title,
      id: topic.url,
      link: topic.url,
      description: topic.summary,
      content: topic.body,
      date: topic.updatedAt,
      published: topic.createdAt,
      category: [{ name: topic.category }],
    });
  }
  return feed;
}

export function rssFeed(baseUrl: string, topics: readonly FeedTopic[]): string {
  return buildFeed(baseUrl, topics).rss2();
}

/**
 * JSON Feed 1.1. The `feed` library writes version 1; 1.1 differs from it only in the version URL,
 * `authors` (an array) replacing `author`, and the optional `language`, so its output is lifted.
 */
export function jsonFeed(baseUrl: string, topics: readonly FeedTopic[]): Record<string, unknown> {
  const v1 = JSON.parse(buildFeed(baseUrl, topics).json1()) as Record<string, unknown> & { author?: unknown; items?: Record<string, unknown>[] };
  const { author, items, ...rest } = v1;
  return {
    ...rest,
    version: 'https://jsonfeed.org/version/1.1',
    language: 'en',
    ...(author ? { authors: [author] } : {}),
    items: (items ?? []).map(({ author: itemAuthor, ...item }) => ({ ...item, ...(itemAuthor ? { authors: [itemAuthor] } : {}) })),
  };
}
