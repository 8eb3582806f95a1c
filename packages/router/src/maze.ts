/**
 * The bait site as a deterministic maze (pure). Every URL below the three bait roots is a page,
 * the same bytes every time it is asked for, drawn from a seed hashed out of its path: topic
 * pages under `/honeypot/topics/`, query pages under `/q/`, agent pages under `/agents/`. Each
 * links deeper into the maze and out to the service's public agent API, which is bait too. A
 * page costs a hash and a few dozen string joins: no model call, no I/O, bounded by the limits
 * below whatever the URL.
 */

export interface Topic {
  slug: string;
  title: string;
  category: string;
  summary: string;
}

export interface MazeOptions {
  /** Topics pages are drawn from (the agent API's; a built-in list when it cannot be read). */
  topics: readonly Topic[];
  /** Where the public agent API is, linked from pages as bait (e.g. `https://api.example.org`). */
  agentApiBase: string;
  /** The site's own name, in titles. */
  siteName: string;
}

export interface Page {
  status: number;
  contentType: string;
  body: string;
}

export const BAIT_ROOTS = ['/honeypot/topics/', '/q/', '/agents/'] as const;
/** Longer paths are answered 414 (and still recorded): the maze never hashes more than this. */
export const MAX_PATH_LENGTH = 2048;
/** Whether the page at `path` names the site's origin (robots.txt's and the sitemap's URLs); no other page depends on it. */
export const namesOrigin = (path: string) => path === '/robots.txt' || path === '/sitemap.xml';
/** How many links a page carries into the maze, and how many paragraphs. */
const LINKS_PER_PAGE = 8;
const PARAGRAPHS_PER_PAGE = 4;
const SENTENCES_PER_PARAGRAPH = 4;

/** FNV-1a, 32 bits: fast, and plenty to seed a page. */
export function seedOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** mulberry32: a small, fast PRNG; the same seed gives the same sequence. */
export function randomFrom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(items: readonly T[], random: () => number): T => items[Math.floor(random() * items.length)] as T;

/**
 * Text as HTML, in ASCII: markup characters and everything outside ASCII as numeric references.
 * An ASCII page is a one-byte string, which Node writes to the socket without re-encoding.
 */
const escapeHtml = (text: string) => text.replace(/[&<>"']|[^\x00-\x7f]/gu, (c) => `&#${c.codePointAt(0)};`);
const slugify = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60) || 'index';

const AGENT_WORDS = ['scout', 'relay', 'archivist', 'harvester', 'curator', 'indexer', 'summariser', 'navigator', 'planner', 'auditor', 'broker', 'librarian'];
const QUERY_STEMS = ['how to', 'best', 'compare', 'latest', 'guide to', 'history of', 'cost of', 'alternatives to', 'why', 'explain'];
const CONNECTIVES = ['In practice,', 'By contrast,', 'Notably,', 'For most teams,', 'Historically,', 'In recent reviews,', 'Put simply,', 'As a rule,'];

/** The words a page's text is made of: the topics' titles and summaries, once. */
export function vocabularyOf(topics: readonly Topic[]): string[] {
  const words = new Set<string>();
  for (const topic of topics) for (const word of `${topic.title} ${topic.summary}`.toLowerCase().split(/[^a-z0-9]+/)) if (word.length > 3) words.add(word);
  return words.size > 0 ? [...words] : ['archive', 'signal', 'network', 'record', 'index', 'summary'];
}

/** Paragraphs written once per maze; a page picks PARAGRAPHS_PER_PAGE of them by its seed. */
const PARAGRAPH_POOL = 256;

export function createMaze(options: MazeOptions) {
  const topics = options.topics.length > 0 ? options.topics : FALLBACK_TOPICS;
  const vocabulary = vocabularyOf(topics);
  const bySlug = new Map(topics.map((topic) => [topic.slug, topic]));
  const api = escapeHtml(options.agentApiBase.replace(/\/+$/, ''));

  // Everything a page is assembled from is escaped, slugged and written once, here: serving a page
  // is then a few picks and one join (a bounded, small cost whatever the URL).
  const words = vocabulary.map((word) => ({ text: escapeHtml(word), slug: slugify(word), query: encodeURIComponent(word) }));
  const stems = QUERY_STEMS.map((stem) => ({ text: escapeHtml(stem), slug: slugify(stem) }));
  const agents = AGENT_WORDS.map((word) => escapeHtml(word));
  const topicLinks = topics.map((topic) => `<li><a href="/honeypot/topics/${topic.slug}">${escapeHtml(topic.title)}</a></li>`);
  const poolRandom = randomFrom(seedOf(`paragraphs:${vocabulary.length}`));
  const sentence = () => {
    const count = 8 + Math.floor(poolRandom() * 8);
    let text = pick(CONNECTIVES, poolRandom);
    for (let i = 0; i < count; i += 1) text += ` ${pick(words, poolRandom).text}`;
    return `${text}.`;
  };
  const pool = Array.from({ length: PARAGRAPH_POOL }, () => `<p>${Array.from({ length: SENTENCES_PER_PARAGRAPH }, sentence).join(' ')}</p>`);

  const paragraphs = (random: () => number) => {
    let text = pick(pool, random);
    for (let i = 1; i < PARAGRAPHS_PER_PAGE; i += 1) text += `\n${pick(pool, random)}`;
    return text;
  };

  /** Links one level below `path` (the maze never ends) and across to the other roots. */
  const links = (path: string, random: () => number) => {
    const base = escapeHtml(path.endsWith('/') ? path : `${path}/`);
    let out = '<ul>';
    for (let i = 0; i < LINKS_PER_PAGE; i += 1) {
      const kind = Math.floor(random() * 3);
      if (kind === 0) out += `\n${pick(topicLinks, random)}`;
      else if (kind === 1) {
        const stem = pick(stems, random);
        const word = pick(words, random);
        out += `\n<li><a href="/q/${stem.slug}-${word.slug}">${stem.text} ${word.text}</a></li>`;
      } else {
        const word = pick(words, random);
        out += `\n<li><a href="${base}${word.slug}-${Math.floor(random() * 1000)}">${word.text}</a></li>`;
      }
    }
    const term = pick(words, random);
    out += `\n<li><a href="${api}/api/agent?query=${term.query}">Search the archive for &ldquo;${term.text}&rdquo; (API)</a></li>`;
    out += `\n<li><a href="/agents/${pick(AGENT_WORDS, random)}-${Math.floor(random() * 100)}">${pick(agents, random)} agent profile</a></li>`;
    return `${out}\n</ul>`;
  };

  const siteName = escapeHtml(options.siteName);
  /** `title` and `description` are escaped already. */
  const html = (title: string, description: string, content: string): Page => ({
    status: 200,
    contentType: 'text/html; charset=utf-8',
    body: `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${title} &middot; ${siteName}</title><meta name="description" content="${description}"></head>\n<body><main><h1>${title}</h1>\n${content}\n</main></body></html>\n`,
  });
  const escapedTopics = new Map(topics.map((topic) => [topic, { title: escapeHtml(topic.title), summary: escapeHtml(topic.summary), category: escapeHtml(topic.category) }]));

  function topicPage(path: string, random: () => number): Page {
    const segments = path.slice('/honeypot/topics/'.length).split('/').filter(Boolean);
    const topic = bySlug.get(segments[0] ?? '') ?? pick(topics, random);
    const depth = segments.length > 1 ? ` &mdash; part ${segments.length}` : '';
    const shown = escapedTopics.get(topic) as { title: string; summary: string; category: string };
    const machineReadable = `<p>Machine-readable: <a href="${api}/api/topics/${topic.slug}">${topic.slug} in the topic API</a>.</p>`;
    return html(`${shown.title}${depth}`, shown.summary, `<p><em>${shown.category}</em>: ${shown.summary}</p>\n${machineReadable}\n${paragraphs(random)}\n${links(path, random)}`);
  }

  function queryPage(path: string, random: () => number): Page {
    const query = decodeSegment(path.slice('/q/'.length).split('/')[0] ?? '').replace(/-/g, ' ') || 'latest';
    const shownQuery = escapeHtml(query);
    const querySlug = slugify(query);
    let results = '';
    for (let i = 0; i < 6; i += 1) {
      const topic = pick(topics, random);
      const shown = escapedTopics.get(topic) as { title: string; summary: string };
      results += `\n<li><a href="/q/${querySlug}/${i + 1}-${topic.slug}">${shown.title}</a> &mdash; ${shown.summary}</li>`;
    }
    return html(`Results for &ldquo;${shownQuery}&rdquo;`, `Archive results for ${shownQuery}`, `<ol>${results}\n</ol>\n${paragraphs(random)}\n${links(path, random)}`);
  }

  function agentPage(path: string, random: () => number): Page {
    const name = escapeHtml(decodeSegment(path.slice('/agents/'.length).split('/')[0] ?? '') || pick(AGENT_WORDS, random));
    return html(`Agent ${name}`, `Capabilities and history of the ${name} agent`, `<p>Status: ${pick(['active', 'retired', 'in review', 'beta'], random)}. Tools: ${Array.from({ length: 4 }, () => pick(words, random).text).join(', ')}.</p>\n${paragraphs(random)}\n${links(path, random)}`);
  }

  function index(): Page {
    const random = randomFrom(seedOf('/'));
    const roots = BAIT_ROOTS.map((root) => `<li><a href="${root}${root === '/q/' ? 'latest' : root === '/agents/' ? 'index' : (topics[0] as Topic).slug}">${root}</a></li>`).join('\n');
    return html(siteName, `${siteName}: an open research archive`, `<ul>\n${roots}\n</ul>\n${paragraphs(random)}`);
  }

  const text = (body: string, contentType = 'text/plain; charset=utf-8'): Page => ({ status: 200, contentType, body });

  /** robots.txt forbids every bait root: a client found below one has ignored it. */
  function robots(origin: string): Page {
    return text(`User-agent: *\n${BAIT_ROOTS.map((root) => `Disallow: ${root}`).join('\n')}\n\nSitemap: ${origin}/sitemap.xml\n`);
  }

  function llms(): Page {
    const sample = topics.slice(0, 10).map((topic) => `- [${topic.title}](/honeypot/topics/${topic.slug}): ${topic.summary}`);
    return text(`# ${options.siteName}\n\n> An open archive of research notes, queries and agent profiles.\n\n## Topics\n\n${sample.join('\n')}\n\n## API\n\n- [Topic search](${api}/api/agent?query=archive): JSON search over every topic\n- [Capabilities](${api}/api/capabilities)\n`, 'text/markdown; charset=utf-8');
  }

  function sitemap(origin: string): Page {
    const urls = ['/', ...topics.slice(0, 50).map((topic) => `/honeypot/topics/${topic.slug}`), '/q/latest', '/agents/index'];
    return text(`<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.map((u) => `<url><loc>${escapeHtml(origin + u)}</loc></url>`).join('\n')}\n</urlset>\n`, 'application/xml; charset=utf-8');
  }

  /** The page for `path` (without its query string) on a site reached at `origin`. */
  return function pageFor(path: string, origin: string): Page {
    if (path.length > MAX_PATH_LENGTH) return { status: 414, contentType: 'text/plain; charset=utf-8', body: 'URI too long\n' };
    if (path === '/') return index();
    if (path === '/robots.txt') return robots(origin);
    if (path === '/llms.txt') return llms();
    if (path === '/sitemap.xml') return sitemap(origin);
    const random = randomFrom(seedOf(path));
    if (path.startsWith('/honeypot/topics/')) return topicPage(path, random);
    if (path.startsWith('/q/')) return queryPage(path, random);
    if (path.startsWith('/agents/')) return agentPage(path, random);
    return { status: 404, contentType: 'text/html; charset=utf-8', body: `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Not found</title></head><body><p>Not found. Try the <a href="/">index</a>.</p></body></html>\n` };
  };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment).slice(0, 120);
  } catch {
    return segment.slice(0, 120);
  }
}

/** Served when the agent API's topics cannot be read at start. */
export const FALLBACK_TOPICS: readonly Topic[] = [
  { slug: 'dns-over-https', title: 'DNS over HTTPS', category: 'tech', summary: 'Resolver privacy, deployment and the trade-offs of encrypted DNS.' },
  { slug: 'llm-pricing', title: 'LLM pricing', category: 'tech', summary: 'How model providers price tokens, context and batch work.' },
  { slug: 'index-funds', title: 'Index funds', category: 'finance', summary: 'Passive investing, fees and tracking error explained.' },
  { slug: 'sleep-science', title: 'Sleep science', category: 'health', summary: 'What research says about sleep cycles, light and recovery.' },
  { slug: 'rail-passes', title: 'Rail passes', category: 'travel', summary: 'Comparing rail passes, routes and reservation rules.' },
  { slug: 'vector-databases', title: 'Vector databases', category: 'tech', summary: 'Approximate nearest neighbour search, indexes and recall.' },
];
