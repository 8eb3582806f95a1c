import { sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../../platform/db/client.ts';

/**
 * What the query replica copies (replica.ts): the graph rows written since a position of
 * `graph_change_seq`, oldest change first. Rows are never deleted from graph_nodes and
 * graph_edges (a removed one keeps its row with `removed_run` set), so these reads see every change.
 */

/** A node as the worker takes it: [id, kind, key, toolset, tenant, named_by, props]. */
export type ReplicaNode = [number, string, string, string | null, string | null, string[] | null, Record<string, unknown>];
/** An edge as the worker takes it: [id, kind, src, dst, props]. */
export type ReplicaEdge = [number, string, number, number, Record<string, unknown>];

export interface Changes<T> {
  live: T[];
  /** Ids of rows removed (removed_run set) since. */
  removed: number[];
  /** The change_seq of the last row read, or `after` when none was. */
  last: number;
  /** How many rows were read (a full batch means there may be more). */
  read: number;
}

/** The newest change_seq of either table (0 for an empty graph). */
export async function latestChange(db: Db): Promise<number> {
  const [row] = rowsOf<{ latest: unknown }>(
    await db.execute(sql`SELECT greatest((SELECT max(change_seq) FROM graph_nodes), (SELECT max(change_seq) FROM graph_edges), 0) AS latest`),
  );
  return Number(row?.latest ?? 0);
}

/**
 * Nodes written after `after`, at most `limit`. `liveOnly` (a first copy) skips removed rows,
 * which a copy that never had them need not delete.
 */
export async function nodesChangedSince(db: Db, after: number, limit: number, liveOnly: boolean): Promise<Changes<ReplicaNode>> {
  const rows = rowsOf<{ id: unknown; kind: string; key: string; toolset: string | null; tenant: string | null; named_by: string[] | null; props: Record<string, unknown>; removed: boolean; seq: unknown }>(
    await db.execute(sql`SELECT id, kind, key, toolset, tenant, named_by, props, removed_run IS NOT NULL AS removed, change_seq AS seq
      FROM graph_nodes WHERE change_seq > ${after} ${liveOnly ? sql`AND removed_run IS NULL` : sql``} ORDER BY change_seq LIMIT ${limit}`),
  );
  return split(rows, after, (r) => [Number(r.id), r.kind, r.key, r.toolset, r.tenant, r.named_by, r.props]);
}

export async function edgesChangedSince(db: Db, after: number, limit: number, liveOnly: boolean): Promise<Changes<ReplicaEdge>> {
  const rows = rowsOf<{ id: unknown; kind: string; src: unknown; dst: unknown; props: Record<string, unknown>; removed: boolean; seq: unknown }>(
    await db.execute(sql`SELECT id, kind, src, dst, props, removed_run IS NOT NULL AS removed, change_seq AS seq
      FROM graph_edges WHERE change_seq > ${after} ${liveOnly ? sql`AND removed_run IS NULL` : sql``} ORDER BY change_seq LIMIT ${limit}`),
  );
  return split(rows, after, (r) => [Number(r.id), r.kind, Number(r.src), Number(r.dst), r.props]);
}

function split<R extends { id: unknown; removed: boolean; seq: unknown }, T>(rows: R[], after: number, shape: (row: R) => T): Changes<T> {
  const live: T[] = [];
  const removed: number[] = [];
  for (const row of rows) {
    if (row.removed) removed.push(Number(row.id));
    else live.push(shape(row));
  }
  return { live, removed, last: rows.length > 0 ? Number(rows.at(-1)!.seq) : after, read: rows.length };
}
