import { sql } from 'drizzle-orm';
import { bigint, bigserial, index, integer, jsonb, pgSequence, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Numbers every write to graph_nodes and graph_edges (`change_seq`), so a copy of the graph can
 * catch up with what changed since it last looked: the embedded database's query replica
 * (docs/graph/query.md, "Where a query runs").
 */
export const graphChangeSeq = pgSequence('graph_change_seq');
const changeSeq = () => bigint('change_seq', { mode: 'number' }).notNull().default(sql`nextval('graph_change_seq')`);

/**
 * A node of the knowledge graph (docs/graph/README.md): one per (kind, key), built by the materialiser
 * from the service's own tables. `toolset` and `tenant` say who the node belongs to, for the
 * query's visibility rule; `props` are what a query may read (never a secret, hash or raw IP).
 * `first_run` is the `seq` of the materialiser run that added it and `removed_run` the run that
 * found its source gone (null while it exists), so the graph as of any run can be listed again
 * for replay. Queries read only rows whose `removed_run` is null. `named_by` is set on a node of no
 * toolset that exists only because some toolsets' events name it (a tenant or fingerprint no
 * honeypot reported): those toolsets, so a token bound to others does not see it; null once a
 * toolset-free source (honeypot tenants and events) has it too. `change_seq` moves on every write.
 */
export const graphNodes = pgTable(
  'graph_nodes',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    kind: text('kind').notNull(),
    key: text('key').notNull(),
    toolset: text('toolset'),
    tenant: text('tenant'),
    namedBy: text('named_by').array(),
    props: jsonb('props').$type<Record<string, unknown>>().notNull(),
    firstRun: bigint('first_run', { mode: 'number' }).notNull(),
    removedRun: bigint('removed_run', { mode: 'number' }),
    materialisedAt: ts('materialised_at').notNull(),
    changeSeq: changeSeq(),
  },
  (t) => [
    uniqueIndex('graph_nodes_kind_key_idx').on(t.kind, t.key),
    index('graph_nodes_change_seq_idx').on(t.changeSeq),
    index('graph_nodes_first_run_idx').on(t.firstRun),
    index('graph_nodes_removed_run_idx').on(t.removedRun).where(sql`${t.removedRun} is not null`),
  ],
);

/**
 * A directed edge between two nodes, one per (kind, src, dst). `props` carry counts for edges
 * that aggregate many source rows (honeypot events). Same run bookkeeping as nodes.
 */
export const graphEdges = pgTable(
  'graph_edges',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    kind: text('kind').notNull(),
    src: bigint('src', { mode: 'number' }).notNull(),
    dst: bigint('dst', { mode: 'number' }).notNull(),
    props: jsonb('props').$type<Record<string, unknown>>().notNull(),
    firstRun: bigint('first_run', { mode: 'number' }).notNull(),
    removedRun: bigint('removed_run', { mode: 'number' }),
    materialisedAt: ts('materialised_at').notNull(),
    changeSeq: changeSeq(),
  },
  (t) => [
    uniqueIndex('graph_edges_kind_src_dst_idx').on(t.kind, t.src, t.dst),
    index('graph_edges_change_seq_idx').on(t.changeSeq),
    index('graph_edges_src_idx').on(t.src, t.kind),
    index('graph_edges_dst_idx').on(t.dst, t.kind),
    index('graph_edges_first_run_idx').on(t.firstRun),
    index('graph_edges_removed_run_idx').on(t.removedRun).where(sql`${t.removedRun} is not null`),
  ],
);

/**
 * One materialiser run (spec B `graph/materialiser`). `seq` orders runs for the node and edge
 * bookkeeping; `digest` is the materialisation digest after the run (docs/graph/README.md) and
 * `digest_acc` the running set-hash it is derived from; `watermarks` the source positions the run
 * read up to, which replay uses to rebuild the same graph from the sources.
 */
export const graphRuns = pgTable(
  'graph_runs',
  {
    id: uuid('id').primaryKey(),
    seq: bigserial('seq', { mode: 'number' }).notNull().unique(),
    trigger: text('trigger').notNull(),
    startedAt: ts('started_at').notNull(),
    finishedAt: ts('finished_at'),
    outcome: text('outcome').notNull(),
    durationMs: integer('duration_ms'),
    errorText: text('error_text'),
    stats: jsonb('stats').$type<Record<string, unknown>>().notNull(),
    digest: text('digest'),
    digestAcc: text('digest_acc'),
    nodeCount: bigint('node_count', { mode: 'number' }),
    edgeCount: bigint('edge_count', { mode: 'number' }),
    watermarks: jsonb('watermarks').$type<Record<string, unknown>>().notNull(),
  },
  (t) => [index('graph_runs_started_idx').on(t.startedAt, t.id)],
);

/**
 * Per node kind: how far the materialiser has read that kind's source. `watermark_at` and
 * `watermark_id` are the (time, id) position of the last source row read for stream sources
 * (null for kinds compared whole each run); `materialised_at` is the instant up to which the
 * source is reflected in the graph, which the lag is measured from.
 */
export const graphKindState = pgTable('graph_kind_state', {
  kind: text('kind').primaryKey(),
  watermarkAt: ts('watermark_at'),
  watermarkId: text('watermark_id'),
  materialisedAt: ts('materialised_at'),
  updatedAt: ts('updated_at').notNull(),
});

/** A saved graph query (spec A "Saved graph query"): unique name per owner, and among shared queries. */
export const graphSavedQueries = pgTable(
  'graph_saved_queries',
  {
    id: uuid('id').primaryKey(),
    ownerUserId: text('owner_user_id').notNull(),
    name: text('name').notNull(),
    description: text('description').notNull(),
    query: text('query').notNull(),
    visibility: text('visibility').notNull(),
    runCount: integer('run_count').notNull(),
    lastRunAt: ts('last_run_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('graph_saved_queries_owner_name_idx').on(t.ownerUserId, t.name),
    index('graph_saved_queries_name_idx').on(t.name),
    // A shared (workspace or public) name belongs to one operator: nobody can shadow another's shared query.
    uniqueIndex('graph_saved_queries_shared_name_idx').on(t.name).where(sql`${t.visibility} <> 'private'`),
  ],
);
