import { FALLBACK_TOPICS, type Topic } from './maze.ts';

/**
 * The topics the maze is drawn from: the service's public topic list (`GET /api/topics`, up to
 * `pages` pages of 50), read once at start. When it cannot be read the built-in list is used, and
 * the reason is returned for the log.
 */
export async function loadTopics(agentApiBase: string, options: { pages?: number; timeoutMs?: number; fetch?: typeof fetch } = {}): Promise<{ topics: Topic[]; problem: string | null }> {
  const send = options.fetch ?? fetch;
  const topics: Topic[] = [];
  try {
    for (let page = 1; page <= (options.pages ?? 4); page += 1) {
      const response = await send(`${agentApiBase.replace(/\/+$/, '')}/api/topics?limit=50&page=${page}`, { signal: AbortSignal.timeout(options.timeoutMs ?? 5000) });
      if (!response.ok) throw new Error(`GET /api/topics answered ${response.status}`);
      const body = (await response.json()) as { topics?: Topic[] };
      const got = (body.topics ?? []).filter((t) => typeof t?.slug === 'string' && /^[a-z0-9-]{1,120}$/.test(t.slug) && typeof t.title === 'string');
      topics.push(...got.map(({ slug, title, category, summary }) => ({ slug, title, category: String(category ?? ''), summary: String(summary ?? '') })));
      if (got.length < 50) break;
    }
  } catch (error) {
    if (topics.length === 0) return { topics: [...FALLBACK_TOPICS], problem: `topics not read (${(error as Error).message}); serving the built-in list` };
  }
  return topics.length > 0 ? { topics, problem: null } : { topics: [...FALLBACK_TOPICS], problem: 'the service has no topics; serving the built-in list' };
}
