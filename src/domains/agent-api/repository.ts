import { asc, desc, eq, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../platform/db/client.ts';
import { agentApiKeys, agentApiMarkers, agentTopicRevision, agentTopics } from './schema.ts';

/**
 * The only SQL of the public agent API: topics (full-text search, browse, upsert), API keys and
 * the one-time seed marker.
 */

export type TopicRow = Omit<typeof agentTopics.$inferSelect, 'search'>;
export type TopicWrite = Omit<TopicRow, 'updatedAt'>;
export type ApiKeyRow = typeof agentApiKeys.$inferSelect;

/** Every column but the generated tsvector. */
const TOPIC_COLUMNS = {
  slug: agentTopics.slug,
  title: agentTopics.title,
  category: agentTopics.category,
  summary: agentTopics.summary,
  body: agentTopics.body,
  createdAt: agentTopics.createdAt,
  updatedAt: agentTopics.updatedAt,
};

export type SortField = 'createdAt' | 'title';
export type SortOrder = 'asc' | 'desc';

/** A topic as a search or browse result lists it (no body). */
export interface TopicHit {
  slug: string;
  title: string;
  category: string;
  summary: string;
  createdAt: Date;
  score: number;
}

/**
 * Sort clauses by (field, order); the slug breaks ties so pages never overlap. Fixed texts, so a
 * caller's value never reaches SQL and each variant keeps one plan.
 */
const ORDER_BY: Record<SortField, Record<SortOrder, string>> = {
  createdAt: { asc: 't.created_at ASC, t.slug ASC', desc: 't.created_at DESC, t.slug DESC' },
  title: { asc: 't.title ASC, t.slug ASC', desc: 't.title DESC, t.slug DESC' },
};

export interface SearchArgs {
  /** A tsquery text (search-query.ts); stemmed with the `english` configuration. */
  tsquery: string;
  category: string | null;
  sort: SortField;
  order: SortOrder;
  limit: number;
  offset: number;
}

/** Matches counted exactly at most; beyond it a search reports this many and `totalExact` false. */
export const SEARCH_TOTAL_CAP = 1000;

/**
 * One page of the topics matching `tsquery`, and whether another page follows (one row past the
 * page is fetched), then the matches counted up to SEARCH_TOTAL_CAP. Two statements rather than
 * `count(*) OVER ()`: a window count makes PostgreSQL visit every match of a common term (tens of
 * thousands at 100,000 topics) before it can return five, while without it the page walks the
 * sort index and stops, and the capped count stops at the cap (docs/agent-api/README.md, "Search").
 * The score is `ts_rank` normalised into 0..1 (normalisation 32: rank/(rank+1)), for page rows only.
 */
export async function searchTopics(db: Db, args: SearchArgs): Promise<{ hits: TopicHit[]; hasMore: boolean; total: number; totalExact: boolean }> {
  const rows = rowsOf<Omit<TopicHit, 'createdAt' | 'score'> & { createdAt: string | Date; score: number | string }>(
    await db.execute(sql`
      SELECT t.slug, t.title, t.category, t.summary, t.created_at AS "createdAt", ts_rank(t.search, q.query, 32) AS score
        FROM agent_topics t, to_tsquery('english'::regconfig, ${args.tsquery}) AS q(query)
       WHERE t.search @@ q.query
         AND (${args.category}::text IS NULL OR t.category = ${args.category}::text)
       ORDER BY ${sql.raw(ORDER_BY[args.sort][args.order])}
       LIMIT ${args.limit + 1} OFFSET ${args.offset}`),
  );
  const [counted] = rowsOf<{ total: number | string }>(
    await db.execute(sql`
      SELECT count(*) AS total FROM (
        SELECT 1 FROM agent_topics t
         WHERE t.search @@ to_tsquery('english'::regconfig, ${args.tsquery})
           AND (${args.category}::text IS NULL OR t.category = ${args.category}::text)
         LIMIT ${SEARCH_TOTAL_CAP + 1}) AS m`),
  );
  const matches = Number(counted?.total ?? 0);
  const page = rows.slice(0, args.limit);
  return {
    hits: page.map((r) => ({ slug: r.slug, title: r.title, category: r.category, summary: r.summary, createdAt: new Date(r.createdAt), score: Number(r.score) })),
    hasMore: rows.length > args.limit,
    total: Math.min(matches, SEARCH_TOTAL_CAP),
    totalExact: matches <= SEARCH_TOTAL_CAP,
  };
}

/** One page of topics, newest first, optionally of one category, with the count of all of them. */
export async function listTopics(db: Db, args: { category: string | null; limit: number; offset: number }): Promise<{ rows: TopicRow[]; total: number }> {
  const where = args.category === null ? undefined : eq(agentTopics.category, args.category);
  const [rows, [counted]] = await Promise.all([
    db.select(TOPIC_COLUMNS).from(agentTopics).where(where).orderBy(desc(agentTopics.createdAt), desc(agentTopics.slug)).limit(args.limit).offset(args.offset),
    db.select({ total: sql<number>`count(*)::int` }).from(agentTopics).where(where),
  ]);
  return { rows, total: Number(counted?.total ?? 0) };
}

/** The newest topics, for the feeds. */
export async function newestTopics(db: Db, limit: number): Promise<TopicRow[]> {
  return db
    .select(TOPIC_COLUMNS)
    .from(agentTopics)
    .orderBy(desc(agentTopics.createdAt), desc(agentTopics.slug))
    .limit(limit);
}

export async function findTopic(db: Db, slug: string): Promise<TopicRow | null> {
  const [row] = await db
    .select(TOPIC_COLUMNS)
    .from(agentTopics)
    .where(eq(agentTopics.slug, slug))
    .limit(1);
  return row ?? null;
}

/** Topic counts per category, for the capabilities document. */
export async function countByCategory(db: Db): Promise<{ category: string; topics: number }[]> {
  const rows = await db
    .select({ category: agentTopics.category, topics: sql<number>`count(*)::int` })
    .from(agentTopics)
    .groupBy(agentTopics.category)
    .orderBy(asc(agentTopics.category));
  return rows.map((r) => ({ category: r.category, topics: Number(r.topics) }));
}

/**
 * Inserts or replaces topics by slug in one statement; `updated_at` is the write time. Returns the
 * slugs that were new (the rest replaced a stored topic).
 */
export async function upsertTopics(db: Db, topics: readonly TopicWrite[], now: Date): Promise<{ inserted: string[] }> {
  if (topics.length === 0) return { inserted: [] };
  const rows = await db
    .insert(agentTopics)
    .values(topics.map((t) => ({ ...t, updatedAt: now })))
    .onConflictDoUpdate({
      target: agentTopics.slug,
      set: {
        title: sql`excluded.title`,
        category: sql`excluded.category`,
        summary: sql`excluded.summary`,
        body: sql`excluded.body`,
        createdAt: sql`excluded.created_at`,
        updatedAt: sql`excluded.updated_at`,
      },
    })
    // xmax is 0 for a row this statement inserted and non-zero for one it updated.
    .returning({ slug: agentTopics.slug, inserted: sql<boolean>`(xmax = 0)` });
  await markTopicsChanged(db, now);
  return { inserted: rows.filter((r) => r.inserted).map((r) => r.slug) };
}

/**
 * Replaces the topics' revision token; called in the transaction of every topic write, so an
 * instance that reads the token after the commit sees the change (search-index/).
 */
async function markTopicsChanged(db: Db, now: Date): Promise<void> {
  await db
    .insert(agentTopicRevision)
    .values({ id: 1, token: sql`gen_random_uuid()`, changedAt: now })
    .onConflictDoUpdate({ target: agentTopicRevision.id, set: { token: sql`excluded.token`, changedAt: sql`excluded.changed_at` } });
}

/** Inserts topics whose slug is free and leaves stored ones alone (the seed corpus). */
export async function insertMissingTopics(db: Db, topics: readonly TopicWrite[], now: Date): Promise<number> {
  if (topics.length === 0) return 0;
  const rows = await db
    .insert(agentTopics)
    .values(topics.map((t) => ({ ...t, updatedAt: now })))
    .onConflictDoNothing()
    .returning({ slug: agentTopics.slug });
  if (rows.length > 0) await markTopicsChanged(db, now);
  return rows.length;
}

/** Claims a one-time step; true for the one caller that claimed it. */
export async function claimMarker(db: Db, key: string, now: Date): Promise<boolean> {
  const rows = await db.insert(agentApiMarkers).values({ key, doneAt: now }).onConflictDoNothing().returning({ key: agentApiMarkers.key });
  return rows.length === 1;
}

// API keys

export async function insertApiKey(db: Db, row: ApiKeyRow): Promise<void> {
  await db.insert(agentApiKeys).values(row);
}

export async function findApiKeyByHash(db: Db, keyHash: string): Promise<ApiKeyRow | null> {
  const [row] = await db.select().from(agentApiKeys).where(eq(agentApiKeys.keyHash, keyHash)).limit(1);
  return row ?? null;
}
