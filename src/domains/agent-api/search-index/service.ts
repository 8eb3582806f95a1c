import type { FastifyBaseLogger } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { Db } from '../../../platform/db/client.ts';
import * as repo from './repository.ts';
import { type IndexAnswer, type IndexQuery, TopicIndexBuilder, type TopicIndex } from './topic-index.ts';
import { parseTsvector } from './tsvector.ts';

/**
 * The search index's life (docs/agent-api/search-index.md): built from PostgreSQL at start, in
 * pages, off the request path; trusted only while the topics' revision token is the one it was
 * built at. A topic write on this instance marks it stale at once (the writer calls
 * `topicsChanged` after its commit); a write elsewhere is seen by the next poll of the token. While
 * stale or building, `find` answers null and the search runs in PostgreSQL as before, so an answer
 * is never older than the poll interval. Query terms are stemmed by PostgreSQL itself (one
 * statement for the terms not yet known, remembered), so the index and the SQL path read a query
 * the same way.
 */

/** How often each instance reads the topics' revision token. */
export const SEARCH_INDEX_POLL_MS = 1000;
/** Topics read per statement while building. */
export const SEARCH_INDEX_LOAD_PAGE = 2000;
/** Stemmed query terms remembered (term → stem). */
export const TERM_CACHE_MAX = 50_000;
/** Quiet time after a local write before rebuilding, so a burst of writes costs one build. */
export const REBUILD_DELAY_MS = 200;

/** A stem; '' for a term PostgreSQL drops (a stop word); false for one it splits into several lexemes (the SQL path answers). */
type Stem = string | false;

/** A search as the service asks it: the query's terms as typed (stemmed here), the rest as the index takes it. */
export type IndexSearch = Omit<IndexQuery, 'stems'> & { terms: readonly string[] };

export interface SearchIndexStats {
  enabled: boolean;
  ready: boolean;
  topics: number;
  memoryBytes: number;
  builds: number;
  lastBuildMs: number | null;
  answered: number;
  fellBack: number;
  termLookups: number;
}

export function createSearchIndex(deps: { db: Db; log: FastifyBaseLogger; enabled: boolean; pollMs?: number; onExternalChange?: () => void }) {
  const { db, log } = deps;
  const pollMs = deps.pollMs ?? SEARCH_INDEX_POLL_MS;
  let current: { index: TopicIndex; revision: string | null } | null = null;
  let stale = true;
  let closed = false;
  let building: Promise<void> | null = null;
  let rebuildAgain = false;
  // Local writes so far: a build that saw one land while it ran does not clear `stale`.
  let localChanges = 0;
  let rebuildTimer: NodeJS.Timeout | null = null;
  let pollTimer: NodeJS.Timeout | null = null;
  // A poll still waiting on a slow database: the next tick skips rather than queue another.
  let polling = false;
  const stems = new LRUCache<string, Stem>({ max: TERM_CACHE_MAX });
  const stemLookups = new Map<string, Promise<void>>();
  const stats = { builds: 0, lastBuildMs: null as number | null, answered: 0, fellBack: 0, termLookups: 0 };

  async function buildOnce(): Promise<boolean> {
    const started = performance.now();
    const changesAtStart = localChanges;
    const before = await repo.topicRevision(db);
    const titleRank = new Map<string, number>();
    (await repo.slugsByTitle(db)).forEach((slug, rank) => titleRank.set(slug, rank));
    const builder = new TopicIndexBuilder();
    let cursor: repo.TopicCursor | null = null;
    for (;;) {
      if (closed) return false;
      const page = await repo.topicsAfter(db, cursor, SEARCH_INDEX_LOAD_PAGE);
      for (const topic of page) {
        const rank = titleRank.get(topic.slug);
        // Written between the two reads: the token below has changed too.
        if (rank === undefined) return false;
        builder.add(topic, rank);
      }
      if (page.length < SEARCH_INDEX_LOAD_PAGE) break;
      cursor = page[page.length - 1]!.cursor;
      // Let requests in between pages: a build at 100,000 topics parses tens of megabytes.
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (builder.size !== titleRank.size) return false;
    const after = await repo.topicRevision(db);
    if (after !== before) return false;
    current = { index: builder.build(), revision: after };
    stale = localChanges !== changesAtStart;
    stats.builds += 1;
    stats.lastBuildMs = Math.round(performance.now() - started);
    log.info({ topics: current.index.size, ms: stats.lastBuildMs, memoryBytes: current.index.memoryBytes() }, 'agent API search index built');
    return true;
  }

  /** Builds until a build finishes without a write landing meanwhile (three tries, then the next poll tries again). */
  function rebuild(): Promise<void> {
    if (building) {
      rebuildAgain = true;
      return building;
    }
    building = (async () => {
      try {
        for (let attempt = 0; attempt < 3 && !closed; attempt++) {
          rebuildAgain = false;
          if ((await buildOnce()) && !rebuildAgain && !stale) return;
        }
      } catch (error) {
        if (!closed) log.warn({ err: error }, 'agent API search index build failed; searches use PostgreSQL until the next poll');
      } finally {
        building = null;
      }
    })();
    return building;
  }

  function scheduleRebuild(delayMs: number) {
    if (closed || !deps.enabled) return;
    if (rebuildTimer) clearTimeout(rebuildTimer);
    rebuildTimer = setTimeout(() => {
      rebuildTimer = null;
      void rebuild();
    }, delayMs);
    rebuildTimer.unref();
  }

  async function poll() {
    if (polling) return;
    polling = true;
    try {
      const revision = await repo.topicRevision(db);
      if (current && revision === current.revision) return;
      if (current && !stale) deps.onExternalChange?.();
      stale = true;
      if (!building && !rebuildTimer) scheduleRebuild(0);
    } catch (error) {
      // The database is away: keep answering from the index as it was.
      if (!closed) log.debug({ err: error }, 'agent API search index poll failed');
    } finally {
      polling = false;
    }
  }

  async function lookUpStems(terms: readonly string[]): Promise<void> {
    const missing = terms.filter((t) => !stems.has(t) && !stemLookups.has(t));
    if (missing.length > 0) {
      stats.termLookups += 1;
      const lookup = repo.termVectors(db, missing).then((vectors) => {
        for (const term of missing) {
          const entries = parseTsvector(vectors.get(term) ?? '');
          const stem: Stem = entries.length === 0 ? '' : entries.length === 1 && entries[0]!.positions.length <= 1 ? entries[0]!.lexeme : false;
          stems.set(term, stem);
        }
      });
      const settled = lookup.finally(() => {
        for (const term of missing) stemLookups.delete(term);
      });
      for (const term of missing) stemLookups.set(term, settled);
    }
    await Promise.all(terms.map((t) => stemLookups.get(t)));
  }

  return {
    /** Starts the first build and the poll; returns at once. */
    start() {
      if (!deps.enabled) return;
      void rebuild();
      pollTimer = setInterval(() => void poll(), pollMs);
      pollTimer.unref();
    },

    /** After this instance committed a topic write: stale at once, rebuilt shortly. */
    topicsChanged() {
      stale = true;
      localChanges += 1;
      if (building) rebuildAgain = true;
      scheduleRebuild(REBUILD_DELAY_MS);
    },

    /** The index's answer, or null when the SQL path must answer (off, stale, building, or a term PostgreSQL splits). */
    async find(search: IndexSearch): Promise<IndexAnswer | null> {
      if (!deps.enabled || stale || !current) {
        if (deps.enabled) stats.fellBack += 1;
        return null;
      }
      const unknown = search.terms.filter((t) => !stems.has(t));
      if (unknown.length > 0) await lookUpStems(unknown);
      const queryStems: string[] = [];
      for (const term of search.terms) {
        const stem = stems.get(term);
        if (stem === undefined || stem === false) {
          stats.fellBack += 1;
          return null;
        }
        if (stem !== '') queryStems.push(stem);
      }
      // The index may have gone stale while the terms were looked up.
      if (stale || !current) {
        stats.fellBack += 1;
        return null;
      }
      stats.answered += 1;
      return current.index.search({ ...search, stems: queryStems });
    },

    /** Resolves once no build is running or scheduled (tests and the bench wait for the index). */
    async settled(): Promise<void> {
      while (building || rebuildTimer) {
        if (building) await building;
        else await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },

    stats(): SearchIndexStats {
      return {
        enabled: deps.enabled,
        ready: !stale && current !== null,
        topics: current?.index.size ?? 0,
        memoryBytes: current?.index.memoryBytes() ?? 0,
        ...stats,
      };
    },

    async close() {
      closed = true;
      if (pollTimer) clearInterval(pollTimer);
      if (rebuildTimer) clearTimeout(rebuildTimer);
      rebuildTimer = null;
      await building;
    },
  };
}

export type SearchIndex = ReturnType<typeof createSearchIndex>;
