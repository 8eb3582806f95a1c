import { validate } from '@readme/openapi-parser';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { toOpenApi30Schema } from '../../platform/http/openapi.ts';

// The documents agents discover the API by: OpenAPI 3.0.3, capabilities, the well-known
// document, the two feeds, robots.txt and llms.txt.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { OBSERVATORY_AGENT_API_ANON_PER_MINUTE: '100000', OBSERVATORY_AGENT_API_IP_PER_MINUTE: '100000' } });
});
afterAll(async () => t?.close());
const get = (url: string) => t.call({ method: 'GET', url, token: null });

describe('GET /api/openapi.json', () => {
  it('is an OpenAPI 3.0.3 document of the public group that an independent validator accepts', async () => {
    const res = await get('/api/openapi.json');
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.0.3');
    const result = await validate(structuredClone(doc));
    expect(result.valid, JSON.stringify(result)).toBe(true);
    expect(Object.keys(doc.paths).sort()).toEqual(
      ['/.well-known/agent-api', '/api/agent', '/api/agent/batch', '/api/capabilities', '/api/openapi.json', '/api/topics', '/api/topics/{slug}', '/feed.json', '/feed.xml', '/llms.txt', '/robots.txt'].sort(),
    );
    // No operator endpoint leaks into the public description.
    expect(JSON.stringify(doc)).not.toContain('svctok');
    const search = doc.paths['/api/agent'].get;
    const names = search.parameters.map((p: { name: string }) => p.name).sort();
    expect(names).toEqual(['agent_name', 'category', 'limit', 'order', 'page', 'query', 'sort', 'source_url']);
    const limit = search.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ type: 'integer', maximum: 50, default: 5 });
    expect(search.responses['429']).toEqual({ $ref: '#/components/responses/RateLimited' });
    expect(doc.components.responses.RateLimited.headers['Retry-After']).toBeDefined();
    expect(search.security).toEqual([{}, { agentApiKey: [] }, { agentBearer: [] }]);
    // 3.0 has no `const` or type arrays: nullable instead.
    const nextPage = search.responses['200'].content['application/json'].schema.properties.nextPage;
    expect(nextPage).toMatchObject({ type: 'integer', nullable: true });
    expect(JSON.stringify(doc)).not.toContain('"const"');
  });

  it('turns JSON Schema 2020 constructs into their 3.0 forms', () => {
    expect(toOpenApi30Schema({ const: 'x', type: 'string' })).toEqual({ enum: ['x'], type: 'string' });
    expect(toOpenApi30Schema({ anyOf: [{ type: 'integer' }, { type: 'null' }] })).toEqual({ type: 'integer', nullable: true });
    expect(toOpenApi30Schema({ anyOf: [{ const: 'a', type: 'string' }, { const: 'b', type: 'string' }] })).toEqual({ type: 'string', enum: ['a', 'b'] });
    expect(toOpenApi30Schema({ type: ['string', 'null'] })).toEqual({ type: 'string', nullable: true });
    expect(toOpenApi30Schema({ type: 'object', patternProperties: { '^a': { type: 'string' } } })).toEqual({ type: 'object', additionalProperties: { type: 'string' } });
  });
});

describe('capabilities and discovery', () => {
  it('lists the features, parameters, limits and live topic counts', async () => {
    const res = await get('/api/capabilities');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.schema).toBe('svc-agent-capabilities.v1');
    expect(body.features).toContain('full-text-search');
    expect(body.search.limit).toEqual({ default: 5, max: 50 });
    expect(body.search.sort).toEqual(['createdAt', 'title']);
    expect(body.categories.map((c: { name: string }) => c.name)).toEqual(['tech', 'finance', 'travel', 'health', 'facts']);
    expect(body.categories.every((c: { topics: number }) => c.topics >= 30)).toBe(true);
    expect(body.rateLimits.anonymous.requests).toBe(100000);
    expect(body.rateLimits.anonymousPerAddress).toMatchObject({ requests: 100000, perSeconds: 60 });
    expect(body.rateLimits.unknownApiKeys).toMatchObject({ requests: 10, perSeconds: 60 });
  });

  it('serves /.well-known/agent-api with absolute links to everything', async () => {
    const res = await get('/.well-known/agent-api');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    const doc = res.json();
    expect(doc.openapi).toBe('http://localhost:8080/api/openapi.json');
    expect(doc.endpoints.search.url).toBe('http://localhost:8080/api/agent');
    expect(doc.feeds).toEqual({ rss: 'http://localhost:8080/feed.xml', json: 'http://localhost:8080/feed.json' });
    expect(doc.authentication.apiKey.headers).toContain('X-API-Key: <API_KEY>');
  });

  it('points agents at the API from robots.txt and llms.txt', async () => {
    const robots = await get('/robots.txt');
    expect(robots.headers['content-type']).toContain('text/plain');
    expect(robots.body).toMatch(/^User-agent: \*$/m);
    expect(robots.body).toMatch(/^Allow: \/api\/$/m);
    expect(robots.body).toContain('http://localhost:8080/api/openapi.json');
    expect(robots.body).toMatch(/^Disallow: \/api\/observatory\/$/m);
    const llms = await get('/llms.txt');
    expect(llms.headers['content-type']).toContain('text/markdown');
    expect(llms.body.split('\n')[0]).toBe('# Observatory Topic Search');
    expect(llms.body).toMatch(/^> /m);
    expect(llms.body).toContain('## API');
    expect(llms.body).toContain('(http://localhost:8080/api/openapi.json)');
  });
});

describe('feeds', () => {
  it('serves RSS 2.0 that an XML parser reads, newest topic first', async () => {
    const res = await get('/feed.xml');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/rss+xml');
    const xml = new XMLParser({ ignoreAttributes: false }).parse(res.body);
    expect(xml.rss['@_version']).toBe('2.0');
    const channel = xml.rss.channel;
    expect(channel.title).toBe('Observatory Topic Search');
    expect(channel.link).toBe('http://localhost:8080/');
    expect(channel.item).toHaveLength(50);
    for (const item of channel.item) {
      expect(item.title.length).toBeGreaterThan(0);
      expect(item.link).toMatch(/^http:\/\/localhost:8080\/honeypot\/topics\//);
      expect(Number.isNaN(Date.parse(item.pubDate))).toBe(false);
    }
    const newest = (await get('/api/topics?limit=1')).json().topics[0];
    expect(channel.item[0].link).toBe(newest.url);
  });

  it('serves JSON Feed 1.1 with the required members', async () => {
    const res = await get('/feed.json');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/feed+json');
    const feed = res.json();
    expect(feed.version).toBe('https://jsonfeed.org/version/1.1');
    expect(feed.title).toBe('Observatory Topic Search');
    expect(feed.feed_url).toBe('http://localhost:8080/feed.json');
    expect(feed.author).toBeUndefined();
    expect(feed.items).toHaveLength(50);
    for (const item of feed.items) {
      expect(typeof item.id).toBe('string');
      expect(typeof item.content_html === 'string' || typeof item.content_text === 'string').toBe(true);
      expect(item.url).toMatch(/^http:\/\/localhost:8080\/honeypot\/topics\//);
      expect(Number.isNaN(Date.parse(item.date_published))).toBe(false);
      expect(item.author).toBeUndefined();
    }
  });
});
