import { sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import type { LoadedTopic } from './topic-index.ts';

/** The only SQL of the search index: the topics' revision token, the topics to index, and query terms as PostgreSQL stems them. */

/** The token replaced by every topic write; null before the first. */
export async function topicRevision(db: Db): Promise<string | null> {
  const [row] = rowsOf<{ token: string }>(await db.execute(sql`SELECT token::text AS token FROM agent_topic_revision WHERE id = 1`));
  return row?.token ?? null;
}

/** Every topic's slug in (title ASC, slug ASC) order, as this database's collation sorts the search's title order. */
export async function slugsByTitle(db: Db): Promise<string[]> {
  return rowsOf<{ slug: string }>(await db.execute(sql`SELECT slug FROM agent_topics ORDER BY title ASC, slug ASC`)).map((r) => r.slug);
}

export interface TopicCursor {
  /** created_at as PostgreSQL prints it, so the next page starts exactly after it. */
  createdAtText: string;
  slug: string;
}

type TopicPage = (LoadedTopic & { cursor: TopicCursor })[];

/** The next `limit` topics in the default order (created_at DESC, slug DESC) after `cursor`, with their stored tsvector. */
export async function topicsAfter(db: Db, cursor: TopicCursor | null, limit: number): Promise<TopicPage> {
  // Two statements rather than `$1 IS NULL OR …`, so each walks the (created_at, slug) index.
  const after = cursor === null ? sql`` : sql`WHERE (created_at, slug) < (${cursor.createdAtText}::timestamptz, ${cursor.slug}::text)`;
  const rows = rowsOf<{ slug: string; title: string; category: string; summary: string; createdAt: string | Date; createdAtText: string; tsvector: string }>(
    await db.execute(sql`
      SELECT slug, title, category, summary, created_at AS "createdAt", created_at::text AS "createdAtText", search::text AS tsvector
        FROM agent_topics
       ${after}
       ORDER BY created_at DESC, slug DESC
       LIMIT ${limit}`),
  );
  return rows.map((r) => ({
    slug: r.slug,
    title: r.title,
    category: r.category,
    summary: r.summary,
    createdAtMs: new Date(r.createdAt).getTime(),
    tsvector: r.tsvector,
    cursor: { createdAtText: r.createdAtText, slug: r.slug },
  }));
}

/** Each term's tsvector under the `english` configuration, as `to_tsquery` would parse and stem it. */
export async function termVectors(db: Db, terms: readonly string[]): Promise<Map<string, string>> {
  const rows = rowsOf<{ term: string; tsvector: string }>(
    await db.execute(
      sql`SELECT u.term, to_tsvector('english'::regconfig, u.term)::text AS tsvector FROM unnest(ARRAY[${sql.join(terms.map((t) => sql`${t}`), sql`, `)}]::text[]) AS u(term)`,
    ),
  );
  return new Map(rows.map((r) => [r.term, r.tsvector]));
}
