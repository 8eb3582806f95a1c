import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BAIT_ROOTS, createMaze, FALLBACK_TOPICS, MAX_PATH_LENGTH, randomFrom, seedOf } from './maze.ts';

const pageFor = createMaze({ topics: FALLBACK_TOPICS, agentApiBase: 'https://api.example.org/', siteName: 'Archive' });
const origin = 'https://bait.example.org';
const hrefs = (body: string) => [...body.matchAll(/href="([^"]*)"/g)].map((m) => m[1] as string);

describe('the maze', () => {
  it('answers the same URL with the same page, and different URLs with different pages', () => {
    for (const path of ['/honeypot/topics/llm-pricing', '/q/best-gpus', '/agents/scout-7', '/honeypot/topics/llm-pricing/deeper-3']) {
      expect(pageFor(path, origin)).toEqual(pageFor(path, origin));
    }
    expect(pageFor('/q/a', origin).body).not.toBe(pageFor('/q/b', origin).body);
    expect(pageFor('/agents/a', origin).body).not.toBe(pageFor('/agents/b', origin).body);
  });

  it('serves a known topic by its slug, with its title and a link to it in the topic API', () => {
    const page = pageFor('/honeypot/topics/llm-pricing', origin);
    expect(page).toMatchObject({ status: 200, contentType: 'text/html; charset=utf-8' });
    expect(page.body).toContain('<h1>LLM pricing</h1>');
    expect(page.body).toContain('href="https://api.example.org/api/topics/llm-pricing"');
  });

  it('links only into the three bait roots of this site and out to the agent API', () => {
    fc.assert(
      fc.property(fc.constantFrom(...BAIT_ROOTS), fc.string({ maxLength: 40 }), (root, rest) => {
        const links = hrefs(pageFor(`${root}${encodeURIComponent(rest)}`, origin).body);
        expect(links.length).toBeGreaterThanOrEqual(8);
        for (const href of links) expect(href.startsWith('https://api.example.org/api/') || BAIT_ROOTS.some((r) => href.startsWith(r))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('links deeper than the page it is on, so the maze never ends', () => {
    const links = hrefs(pageFor('/agents/scout-1', origin).body).filter((h) => h.startsWith('/agents/scout-1/'));
    const deeper = hrefs(pageFor('/honeypot/topics/x/y', origin).body).filter((h) => h.startsWith('/honeypot/topics/x/y/'));
    expect(links.length + deeper.length).toBeGreaterThan(0);
  });

  it('escapes what the URL puts in the page', () => {
    const page = pageFor(`/q/${encodeURIComponent('<script>alert(1)</script>')}`, origin);
    expect(page.body).not.toContain('<script>');
    expect(page.body).toContain('&#60;script&#62;');
    const agent = pageFor('/agents/%22onmouseover%3D%22x', origin);
    expect(agent.body).not.toMatch(/"onmouseover="/);
  });

  it('keeps every page small whatever the URL (fast-check)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (rest) => {
        for (const root of BAIT_ROOTS) expect(Buffer.byteLength(pageFor(`${root}${rest}`, origin).body)).toBeLessThan(16_384);
      }),
      { numRuns: 200 },
    );
  });

  it('answers 414 past the longest path it hashes, and 404 outside the roots', () => {
    expect(pageFor(`/q/${'a'.repeat(MAX_PATH_LENGTH)}`, origin).status).toBe(414);
    expect(pageFor('/wp-admin/', origin).status).toBe(404);
    expect(pageFor('/', origin).status).toBe(200);
  });

  it('forbids the bait roots in robots.txt and points at the sitemap, which lists bait pages', () => {
    expect(pageFor('/robots.txt', origin).body).toBe(
      'User-agent: *\nDisallow: /honeypot/topics/\nDisallow: /q/\nDisallow: /agents/\n\nSitemap: https://bait.example.org/sitemap.xml\n',
    );
    const sitemap = pageFor('/sitemap.xml', origin);
    expect(sitemap.contentType).toBe('application/xml; charset=utf-8');
    expect(sitemap.body).toContain('<loc>https://bait.example.org/honeypot/topics/llm-pricing</loc>');
    const llms = pageFor('/llms.txt', origin);
    expect(llms.contentType).toBe('text/markdown; charset=utf-8');
    expect(llms.body).toContain('[LLM pricing](/honeypot/topics/llm-pricing)');
    expect(llms.body).toContain('https://api.example.org/api/agent?query=');
  });

  it('draws pages from a seeded generator: FNV-1a seeds, a repeatable sequence', () => {
    expect(seedOf('')).toBe(0x811c9dc5);
    expect(seedOf('a')).toBe(0xe40c292c);
    const a = randomFrom(42);
    const b = randomFrom(42);
    const first = Array.from({ length: 5 }, a);
    expect(Array.from({ length: 5 }, b)).toEqual(first);
    for (const x of first) expect(x >= 0 && x < 1).toBe(true);
  });
});
