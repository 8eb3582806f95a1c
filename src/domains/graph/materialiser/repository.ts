import { type SQL, sql } from 'drizzle-orm';
import { asDate, asDateOrNull, type Db, rowsOf } from '../../../platform/db/client.ts';
import type { Watermark } from '../../../platform/db/keyset.ts';
import type { NodeKind } from '../kinds.ts';
import type { EdgeSpec, NodeRef, NodeSpec, WriteMode } from './sources.ts';
import { refKey, SUMMED_PROPS } from './sources.ts';

/**
 * The materialiser's SQL over the graph's own tables (docs/graph/materialiser.md). What it reads of
 * the source domains comes through their reads (ports.ts).
 */

// Runs

export interface RunRow {
  id: string;
  seq: number;
  trigger: string;
  startedAt: Date;
  finishedAt: Date | null;
  outcome: string;
  durationMs: number | null;
  errorText: string | null;
  stats: Record<string, unknown>;
  digest: string | null;
  digestAcc: string | null;
  nodeCount: number | null;
  edgeCount: number | null;
  watermarks: Record<string, unknown>;
}

const RUN_COLUMNS = sql`id::text AS id, seq, trigger, started_at AS "startedAt", finished_at AS "finishedAt", outcome, duration_ms AS "durationMs",
  error_text AS "errorText", stats, digest, digest_acc AS "digestAcc", node_count AS "nodeCount", edge_count AS "edgeCount", watermarks`;

function toRun(r: Record<string, unknown>): RunRow {
  return {
    id: String(r.id),
    seq: Number(r.seq),
    trigger: String(r.trigger),
    startedAt: asDate(r.startedAt),
    finishedAt: asDateOrNull(r.finishedAt),
    outcome: String(r.outcome),
    durationMs: r.durationMs === null ? null : Number(r.durationMs),
    errorText: (r.errorText as string | null) ?? null,
    stats: (r.stats as Record<string, unknown>) ?? {},
    digest: (r.digest as string | null) ?? null,
    digestAcc: (r.digestAcc as string | null) ?? null,
    nodeCount: r.nodeCount === null ? null : Number(r.nodeCount),
    edgeCount: r.edgeCount === null ? null : Number(r.edgeCount),
    watermarks: (r.watermarks as Record<string, unknown>) ?? {},
  };
}

/** Records a run as running, visible to status reads at once (committed on its own). */
export async function insertRunningRun(db: Db, row: { id: string; trigger: string; startedAt: Date }): Promise<void> {
  await db.execute(sql`INSERT INTO graph_runs (id, trigger, started_at, outcome, stats, watermarks)
    VALUES (${row.id}::uuid, ${row.trigger}, ${row.startedAt.toISOString()}::timestamptz, 'running', '{}'::jsonb, '{}'::jsonb)`);
}

/** Serialises runs across instances until the transaction ends. */
export async function lockMaterialiser(tx: Db): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('graph-materialise'))`);
}

/**
 * Draws the run's `seq` again once it holds the lock: seq then orders runs as they changed the
 * graph (a run that waited for the lock gets a seq after the one it waited for), which the
 * first_run / removed_run bookkeeping of replay relies on.
 */
export async function redrawSeq(tx: Db, id: string): Promise<number> {
  const [row] = rowsOf<{ seq: unknown }>(
    await tx.execute(sql`UPDATE graph_runs SET seq = nextval(pg_get_serial_sequence('graph_runs', 'seq')) WHERE id = ${id}::uuid RETURNING seq`),
  );
  return Number(row!.seq);
}

export async function finishRun(
  db: Db,
  id: string,
  patch: { outcome: 'ok' | 'error'; finishedAt: Date; durationMs: number; errorText: string | null; stats: Record<string, unknown>; digest?: string; digestAcc?: string; nodeCount?: number; edgeCount?: number; watermarks?: Record<string, unknown> },
): Promise<void> {
  await db.execute(sql`UPDATE graph_runs SET outcome = ${patch.outcome}, finished_at = ${patch.finishedAt.toISOString()}::timestamptz, duration_ms = ${patch.durationMs},
    error_text = ${patch.errorText}, stats = ${JSON.stringify(patch.stats)}::jsonb, digest = ${patch.digest ?? null}, digest_acc = ${patch.digestAcc ?? null},
    node_count = ${patch.nodeCount ?? null}, edge_count = ${patch.edgeCount ?? null}, watermarks = ${JSON.stringify(patch.watermarks ?? {})}::jsonb
    WHERE id = ${id}::uuid`);
}

/** The last run that completed: what the next one builds its digest on. */
export async function lastOkRun(db: Db): Promise<RunRow | null> {
  const [row] = rowsOf<Record<string, unknown>>(await db.execute(sql`SELECT ${RUN_COLUMNS} FROM graph_runs WHERE outcome = 'ok' ORDER BY seq DESC LIMIT 1`));
  return row ? toRun(row) : null;
}

export async function recentRuns(db: Db, limit: number): Promise<RunRow[]> {
  return rowsOf<Record<string, unknown>>(await db.execute(sql`SELECT ${RUN_COLUMNS} FROM graph_runs ORDER BY started_at DESC, seq DESC LIMIT ${limit}`)).map(toRun);
}

export async function runById(db: Db, id: string): Promise<RunRow | null> {
  const [row] = rowsOf<Record<string, unknown>>(await db.execute(sql`SELECT ${RUN_COLUMNS} FROM graph_runs WHERE id = ${id}::uuid`));
  return row ? toRun(row) : null;
}

// Kind state

export interface KindStateRow {
  kind: string;
  watermark: Watermark | null;
  materialisedAt: Date | null;
}

export async function kindStates(db: Db): Promise<KindStateRow[]> {
  const rows = rowsOf<{ kind: string; at: string | null; id: string | null; materialisedAt: unknown }>(
    await db.execute(sql`SELECT kind, watermark_at::text AS at, watermark_id AS id, materialised_at AS "materialisedAt" FROM graph_kind_state`),
  );
  return rows.map((r) => ({ kind: r.kind, watermark: r.at !== null && r.id !== null ? { at: r.at, id: r.id } : null, materialisedAt: asDateOrNull(r.materialisedAt) }));
}

/** Saves a kind's position; `materialised_at` never moves back (a clock set back does not un-reflect the source). */
export async function saveKindState(tx: Db, kind: NodeKind, state: { watermark: Watermark | null; materialisedAt: Date; updatedAt: Date }): Promise<void> {
  await tx.execute(sql`INSERT INTO graph_kind_state (kind, watermark_at, watermark_id, materialised_at, updated_at)
    VALUES (${kind}, ${state.watermark?.at ?? null}::timestamptz, ${state.watermark?.id ?? null}, ${state.materialisedAt.toISOString()}::timestamptz, ${state.updatedAt.toISOString()}::timestamptz)
    ON CONFLICT (kind) DO UPDATE SET watermark_at = EXCLUDED.watermark_at, watermark_id = EXCLUDED.watermark_id,
      materialised_at = greatest(graph_kind_state.materialised_at, EXCLUDED.materialised_at), updated_at = EXCLUDED.updated_at`);
}

// Graph writes

/** What an existing row's props become under `merge`: the SQL twin of sources.ts `mergeCounts`. */
function mergeProps(table: 'graph_nodes' | 'graph_edges'): SQL {
  const old = (field: string) => `${table}.props ->> '${field}'`;
  const summed = (field: string) =>
    `'${field}', CASE WHEN ${table}.props ? '${field}' OR EXCLUDED.props ? '${field}' THEN coalesce((${old(field)})::bigint, 0) + coalesce((EXCLUDED.props ->> '${field}')::bigint, 0) END`;
  return sql.raw(`jsonb_strip_nulls(${table}.props || EXCLUDED.props || jsonb_build_object(
    ${SUMMED_PROPS.map(summed).join(',\n    ')},
    'firstAt', least(${old('firstAt')} COLLATE "C", EXCLUDED.props ->> 'firstAt' COLLATE "C"),
    'lastAt', greatest(${old('lastAt')} COLLATE "C", EXCLUDED.props ->> 'lastAt' COLLATE "C"),
    'lastUaClass', CASE WHEN ${old('lastAt')} IS NULL OR EXCLUDED.props ->> 'lastAt' COLLATE "C" >= ${old('lastAt')} COLLATE "C"
      THEN coalesce(EXCLUDED.props -> 'lastUaClass', ${table}.props -> 'lastUaClass') ELSE coalesce(${table}.props -> 'lastUaClass', EXCLUDED.props -> 'lastUaClass') END))`);
}

/**
 * `first_run` of a row an upsert touches: kept while it exists, the run's own when it comes back
 * after an earlier run removed it (the digest counts it as added by this run).
 */
const firstRunOnConflict = (table: 'graph_nodes' | 'graph_edges', seq: number) =>
  sql.raw(`first_run = CASE WHEN ${table}.removed_run IS NULL OR ${table}.removed_run = ${Number(seq)} THEN ${table}.first_run ELSE EXCLUDED.first_run END, removed_run = NULL, ${NEXT_CHANGE}`);

/**
 * Every write to a graph row takes the next `change_seq` (the query replica catches up by it,
 * docs/graph/query.md "Where a query runs"); an insert takes it from the column's default.
 */
const NEXT_CHANGE = `change_seq = nextval('graph_change_seq')`;

/**
 * `named_by` of a node an upsert touches (graph_nodes.named_by): a node brought back starts from
 * the write's; a toolset-free source on either side makes it null for good; else both lists.
 */
const NAMED_BY_ON_CONFLICT = sql.raw(`named_by = CASE WHEN graph_nodes.removed_run IS NOT NULL THEN EXCLUDED.named_by
      WHEN graph_nodes.named_by IS NULL OR EXCLUDED.named_by IS NULL THEN NULL
      ELSE ARRAY(SELECT DISTINCT t FROM unnest(graph_nodes.named_by || EXCLUDED.named_by) AS t ORDER BY t) END`);

/** Whether an `ensure` write changes what `named_by` holds (so only then is a new row version written). */
const NAMED_BY_CHANGES = sql.raw(`(graph_nodes.named_by IS NOT NULL AND (EXCLUDED.named_by IS NULL OR NOT graph_nodes.named_by @> EXCLUDED.named_by))`);

/** Writes nodes under `mode`; returns the ids of every node named (`kind|key` → id). */
export async function writeNodes(tx: Db, nodes: readonly NodeSpec[], mode: WriteMode, run: { seq: number; at: Date }): Promise<Map<string, number>> {
  if (nodes.length === 0) return new Map();
  const payload = JSON.stringify(nodes.map((n) => [n.kind, n.key, n.toolset, n.tenant, n.props, n.namedBy ?? null]));
  const onConflict =
    mode === 'replace'
      ? sql`DO UPDATE SET ${firstRunOnConflict('graph_nodes', run.seq)}, toolset = EXCLUDED.toolset, tenant = EXCLUDED.tenant, props = EXCLUDED.props, named_by = EXCLUDED.named_by, materialised_at = EXCLUDED.materialised_at`
      : mode === 'merge'
        ? sql`DO UPDATE SET ${firstRunOnConflict('graph_nodes', run.seq)}, toolset = coalesce(EXCLUDED.toolset, graph_nodes.toolset), tenant = coalesce(EXCLUDED.tenant, graph_nodes.tenant),
            props = ${mergeProps('graph_nodes')}, ${NAMED_BY_ON_CONFLICT}, materialised_at = EXCLUDED.materialised_at`
        : // A node only named: untouched while it exists (no needless row version), brought back if
          // removed, and written when who names it widens (another toolset) or a toolset-free source names it.
          sql`DO UPDATE SET ${firstRunOnConflict('graph_nodes', run.seq)}, ${NAMED_BY_ON_CONFLICT} WHERE graph_nodes.removed_run IS NOT NULL OR ${NAMED_BY_CHANGES}`;
  await tx.execute(sql`
    INSERT INTO graph_nodes (kind, key, toolset, tenant, props, named_by, first_run, removed_run, materialised_at)
    SELECT v ->> 0, v ->> 1, v ->> 2, v ->> 3, v -> 4, CASE WHEN jsonb_typeof(v -> 5) = 'array' THEN ARRAY(SELECT jsonb_array_elements_text(v -> 5)) END,
      ${run.seq}, NULL, ${run.at.toISOString()}::timestamptz FROM jsonb_array_elements(${payload}::jsonb) AS v
    ON CONFLICT (kind, key) ${onConflict}`);
  return nodeIds(tx, nodes);
}

/** Ids of existing nodes (removed ones too), `kind|key` → id. */
export async function nodeIds(tx: Db, refs: readonly NodeRef[], liveOnly = false): Promise<Map<string, number>> {
  if (refs.length === 0) return new Map();
  const payload = JSON.stringify(refs.map((r) => [r.kind, r.key]));
  const rows = rowsOf<{ id: unknown; kind: string; key: string }>(
    await tx.execute(sql`SELECT n.id, n.kind, n.key FROM jsonb_array_elements(${payload}::jsonb) AS v JOIN graph_nodes n ON n.kind = v ->> 0 AND n.key = v ->> 1
      ${liveOnly ? sql`WHERE n.removed_run IS NULL` : sql``}`),
  );
  return new Map(rows.map((r) => [refKey({ kind: r.kind as NodeKind, key: r.key }), Number(r.id)]));
}

/** Writes edges under `mode` (`replace` is treated as `ensure`: edges carry no props of their own beyond counts). */
export async function writeEdges(tx: Db, edges: readonly EdgeSpec[], mode: WriteMode, ids: ReadonlyMap<string, number>, run: { seq: number; at: Date }): Promise<void> {
  if (edges.length === 0) return;
  const payload = JSON.stringify(
    edges.map((e) => {
      const src = ids.get(refKey(e.src));
      const dst = ids.get(refKey(e.dst));
      if (src === undefined || dst === undefined) throw new Error(`graph edge ${e.kind} names a node that is not written: ${refKey(src === undefined ? e.src : e.dst)}`);
      return [e.kind, src, dst, e.props];
    }),
  );
  const onConflict =
    mode === 'merge'
      ? sql`DO UPDATE SET ${firstRunOnConflict('graph_edges', run.seq)}, props = ${mergeProps('graph_edges')}, materialised_at = EXCLUDED.materialised_at`
      : sql`DO UPDATE SET ${firstRunOnConflict('graph_edges', run.seq)} WHERE graph_edges.removed_run IS NOT NULL`;
  await tx.execute(sql`
    INSERT INTO graph_edges (kind, src, dst, props, first_run, removed_run, materialised_at)
    SELECT v ->> 0, (v ->> 1)::bigint, (v ->> 2)::bigint, v -> 3, ${run.seq}, NULL, ${run.at.toISOString()}::timestamptz FROM jsonb_array_elements(${payload}::jsonb) AS v
    ON CONFLICT (kind, src, dst) ${onConflict}`);
}

export interface LiveNode extends NodeSpec {
  id: number;
}

/** Every live node of a kind (the small, whole-compared kinds only). */
export async function liveNodesOf(tx: Db, kind: NodeKind): Promise<LiveNode[]> {
  return rowsOf<{ id: unknown; key: string; toolset: string | null; tenant: string | null; props: Record<string, unknown>; namedBy: string[] | null }>(
    await tx.execute(sql`SELECT id, key, toolset, tenant, props, named_by AS "namedBy" FROM graph_nodes WHERE kind = ${kind} AND removed_run IS NULL`),
  ).map((r) => ({ id: Number(r.id), kind, key: r.key, toolset: r.toolset, tenant: r.tenant, props: r.props, namedBy: r.namedBy }));
}

/** Live edges of the given kinds leaving the given kind of node, as (kind, srcKey, dstKind, dstKey, id). */
export async function liveEdgesFrom(tx: Db, srcKind: NodeKind, edgeKinds: readonly string[]): Promise<{ id: number; kind: string; srcKey: string; dstKind: string; dstKey: string }[]> {
  return rowsOf<{ id: unknown; kind: string; srcKey: string; dstKind: string; dstKey: string }>(
    await tx.execute(sql`SELECT e.id, e.kind, s.key AS "srcKey", d.kind AS "dstKind", d.key AS "dstKey"
      FROM graph_edges e JOIN graph_nodes s ON s.id = e.src JOIN graph_nodes d ON d.id = e.dst
      WHERE e.removed_run IS NULL AND s.kind = ${srcKind} AND e.kind IN (SELECT jsonb_array_elements_text(${JSON.stringify(edgeKinds)}::jsonb))`),
  ).map((r) => ({ ...r, id: Number(r.id) }));
}

export async function markEdgesRemoved(tx: Db, ids: readonly number[], seq: number): Promise<void> {
  if (ids.length === 0) return;
  await tx.execute(sql`UPDATE graph_edges SET removed_run = ${seq}, ${sql.raw(NEXT_CHANGE)} WHERE id IN (SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::bigint) AND removed_run IS NULL`);
}

/** Of these nodes, those some live edge still names (as source or destination). */
export async function referencedNodes(tx: Db, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = rowsOf<{ id: unknown }>(
    await tx.execute(sql`SELECT n.id FROM (SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::bigint AS id) n
      WHERE EXISTS (SELECT 1 FROM graph_edges e WHERE e.src = n.id AND e.removed_run IS NULL)
         OR EXISTS (SELECT 1 FROM graph_edges e WHERE e.dst = n.id AND e.removed_run IS NULL)`),
  );
  return new Set(rows.map((r) => Number(r.id)));
}

export async function markNodesRemoved(tx: Db, ids: readonly number[], seq: number): Promise<void> {
  if (ids.length === 0) return;
  await tx.execute(sql`UPDATE graph_nodes SET removed_run = ${seq}, ${sql.raw(NEXT_CHANGE)} WHERE id IN (SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::bigint) AND removed_run IS NULL`);
}

/**
 * Marks removed the live nodes of derived kinds (Toolset, Cluster) that no live edge names any
 * more. Only nodes the run could have left unnamed are looked at: the ends of the edges it marked
 * removed (graph_edges_removed_run_idx) and the nodes it added or brought back
 * (graph_nodes_first_run_idx), so the cost follows what the run changed, not how many derived
 * nodes the graph holds.
 */
export async function removeUnreferenced(tx: Db, kinds: readonly NodeKind[], seq: number): Promise<number> {
  if (kinds.length === 0) return 0;
  const rows = rowsOf<{ id: unknown }>(
    await tx.execute(sql`UPDATE graph_nodes n SET removed_run = ${seq}, ${sql.raw(NEXT_CHANGE)}
      WHERE n.id IN (SELECT e.src FROM graph_edges e WHERE e.removed_run = ${seq}
                     UNION SELECT e.dst FROM graph_edges e WHERE e.removed_run = ${seq}
                     UNION SELECT c.id FROM graph_nodes c WHERE c.first_run = ${seq})
        AND n.kind IN (${sql.join(
          kinds.map((k) => sql`${k}`),
          sql`, `,
        )}) AND n.removed_run IS NULL
        AND NOT EXISTS (SELECT 1 FROM graph_edges e WHERE e.src = n.id AND e.removed_run IS NULL)
        AND NOT EXISTS (SELECT 1 FROM graph_edges e WHERE e.dst = n.id AND e.removed_run IS NULL)
      RETURNING n.id`),
  );
  return rows.length;
}

// Identities and their hash sums

const NODE_IDENTITY = sql`'n|' || n.kind || '|' || n.key`;
const EDGE_IDENTITY = sql`'e|' || e.kind || '|' || s.kind || '|' || s.key || '|' || d.kind || '|' || d.key`;
const EDGE_JOIN = sql`graph_edges e JOIN graph_nodes s ON s.id = e.src JOIN graph_nodes d ON d.id = e.dst`;

/** Identities a run added (present after it, first_run = it) and removed (present before it, removed_run = it). */
export const nodesAddedBy = (seq: number) => sql`SELECT ${NODE_IDENTITY} AS identity FROM graph_nodes n WHERE n.first_run = ${seq} AND n.removed_run IS NULL`;
export const nodesRemovedBy = (seq: number) => sql`SELECT ${NODE_IDENTITY} AS identity FROM graph_nodes n WHERE n.removed_run = ${seq} AND n.first_run < ${seq}`;
export const edgesAddedBy = (seq: number) => sql`SELECT ${EDGE_IDENTITY} AS identity FROM ${EDGE_JOIN} WHERE e.first_run = ${seq} AND e.removed_run IS NULL`;
export const edgesRemovedBy = (seq: number) => sql`SELECT ${EDGE_IDENTITY} AS identity FROM ${EDGE_JOIN} WHERE e.removed_run = ${seq} AND e.first_run < ${seq}`;

/** The identities the graph rows say existed after run `seq`. */
export const storedNodesAsOf = (seq: number) =>
  sql`SELECT ${NODE_IDENTITY} AS identity FROM graph_nodes n WHERE n.first_run <= ${seq} AND (n.removed_run IS NULL OR n.removed_run > ${seq})`;
export const storedEdgesAsOf = (seq: number) =>
  sql`SELECT ${EDGE_IDENTITY} AS identity FROM ${EDGE_JOIN} WHERE e.first_run <= ${seq} AND (e.removed_run IS NULL OR e.removed_run > ${seq})`;

export interface IdentitySums {
  count: number;
  /** Σ over the rows of each 32-bit big-endian word of SHA-256(identity), as decimal text (digest.ts accFromChunkSums). */
  chunkSums: string[];
}

/** Count and chunk sums of SHA-256 over the identities `identities` selects (column `identity`). */
export async function identitySums(db: Db, identities: SQL): Promise<IdentitySums> {
  const words = Array.from({ length: 8 }, (_, i) => sql.raw(`coalesce(sum(('x' || encode(substring(h from ${1 + 4 * i} for 4), 'hex'))::bit(32)::bigint), 0)::text AS w${i}`));
  const [row] = rowsOf<Record<string, unknown>>(
    await db.execute(sql`SELECT count(*)::text AS n, ${sql.join(words, sql`, `)} FROM (SELECT sha256(convert_to(i.identity, 'UTF8')) AS h FROM (${identities}) i) hashed`),
  );
  return { count: Number(row!.n), chunkSums: Array.from({ length: 8 }, (_, i) => String(row![`w${i}`])) };
}

/** Identities in `a` but not in `b`: how many, and the first `limit` in order. */
export async function difference(db: Db, a: SQL, b: SQL, limit: number): Promise<{ count: number; sample: string[] }> {
  const rows = rowsOf<{ identity: string; total: unknown }>(
    await db.execute(sql`WITH d AS (SELECT identity FROM (${a}) x EXCEPT SELECT identity FROM (${b}) y)
      SELECT identity, count(*) OVER () AS total FROM d ORDER BY identity COLLATE "C" LIMIT ${limit}`),
  );
  return { count: rows.length === 0 ? 0 : Number(rows[0]!.total), sample: rows.map((r) => r.identity) };
}

/** Live node and edge counts per kind. */
export async function countsByKind(db: Db): Promise<{ nodes: Map<string, number>; edges: Map<string, number> }> {
  const nodes = rowsOf<{ kind: string; n: unknown }>(await db.execute(sql`SELECT kind, count(*) AS n FROM graph_nodes WHERE removed_run IS NULL GROUP BY kind`));
  const edges = rowsOf<{ kind: string; n: unknown }>(await db.execute(sql`SELECT kind, count(*) AS n FROM graph_edges WHERE removed_run IS NULL GROUP BY kind`));
  return { nodes: new Map(nodes.map((r) => [r.kind, Number(r.n)])), edges: new Map(edges.map((r) => [r.kind, Number(r.n)])) };
}

// Replay: the identities the sources give as of a run's watermarks

/** The source relations as of a run's watermarks (ports.ts), and the vendor registry's ids. */
export interface ReplayInputs {
  /** (slug, fp, ja4, vendor_id) */
  honeypotEvents: SQL;
  /** (slug) */
  tenants: SQL;
  /** (id, toolset, sender_id, tenant, caused_by, key_id, attestation_id, about) */
  empireEvents: SQL;
  /** (id, toolset, event_ids) */
  incidents: SQL;
  /** (id, key_id) */
  attestations: SQL;
  /** (id, toolset) */
  keys: SQL;
  vendorIds: readonly string[];
}

/**
 * Every node and edge identity the materialiser produces from the sources: stream rows at or
 * before the run's watermarks, small sources (tenants, keys, incidents, the vendor registry) as
 * they are now. The same rules as the incremental writes in sources.ts and service.ts, in one
 * statement (docs/graph/materialiser.md, "Replay").
 */
export function liveIdentities(inputs: ReplayInputs): { nodes: SQL; edges: SQL } {
  const ctes = sql`
    hp AS (${inputs.honeypotEvents}),
    tenants AS (${inputs.tenants}),
    ev AS (${inputs.empireEvents}),
    att AS (${inputs.attestations}),
    keys AS (${inputs.keys}),
    inc AS (${inputs.incidents})`;
  const nodes = sql`WITH ${ctes},
    nodes(kind, key) AS (
      SELECT 'Tenant', slug FROM tenants
      UNION SELECT 'Tenant', slug FROM hp
      UNION SELECT 'Tenant', tenant FROM ev WHERE tenant IS NOT NULL
      UNION SELECT 'Fingerprint', fp FROM hp
      UNION SELECT 'Fingerprint', about FROM ev WHERE about IS NOT NULL
      UNION SELECT 'Cluster', ja4 FROM hp WHERE ja4 IS NOT NULL
      UNION SELECT 'Vendor', v FROM jsonb_array_elements_text(${JSON.stringify(inputs.vendorIds)}::jsonb) AS v
      UNION SELECT 'Vendor', vendor_id FROM hp WHERE vendor_id IS NOT NULL
      UNION SELECT 'Toolset', toolset FROM ev
      UNION SELECT 'Toolset', toolset FROM keys
      UNION SELECT 'Toolset', toolset FROM inc
      UNION SELECT 'EmpireEvent', id FROM ev
      UNION SELECT 'Incident', id FROM inc
      UNION SELECT 'Key', id FROM keys
      UNION SELECT 'Key', key_id FROM ev WHERE key_id IS NOT NULL
      UNION SELECT 'Key', key_id FROM att WHERE key_id IS NOT NULL
      UNION SELECT 'Attestation', id FROM att
      UNION SELECT 'Attestation', attestation_id FROM ev WHERE attestation_id IS NOT NULL)
    SELECT 'n|' || kind || '|' || key AS identity FROM nodes`;
  const edges = sql`WITH ${ctes},
    edges(kind, sk, skey, dk, dkey) AS (
      SELECT 'SEEN_ON', 'Fingerprint', fp, 'Tenant', slug FROM hp
      UNION SELECT 'IN_CLUSTER', 'Fingerprint', fp, 'Cluster', ja4 FROM hp WHERE ja4 IS NOT NULL
      UNION SELECT 'CLAIMS', 'Fingerprint', fp, 'Vendor', vendor_id FROM hp WHERE vendor_id IS NOT NULL
      UNION SELECT 'EMITTED_BY', 'EmpireEvent', id, 'Toolset', toolset FROM ev
      UNION SELECT 'CAUSED_BY', 'EmpireEvent', x.id, 'EmpireEvent', c.id FROM ev x JOIN ev c ON c.toolset = x.toolset AND c.sender_id = x.caused_by
      UNION SELECT 'FROM_TENANT', 'EmpireEvent', id, 'Tenant', tenant FROM ev WHERE tenant IS NOT NULL
      UNION SELECT 'ABOUT', 'EmpireEvent', id, 'Fingerprint', about FROM ev WHERE about IS NOT NULL
      UNION SELECT 'SIGNED_BY', 'EmpireEvent', id, 'Key', key_id FROM ev WHERE key_id IS NOT NULL
      UNION SELECT 'ATTESTS', 'Attestation', attestation_id, 'EmpireEvent', id FROM ev WHERE attestation_id IS NOT NULL
      UNION SELECT 'BY_KEY', 'Attestation', id, 'Key', key_id FROM att WHERE key_id IS NOT NULL
      UNION SELECT 'BELONGS_TO', 'Key', id, 'Toolset', toolset FROM keys
      UNION SELECT 'CONCERNS', 'Incident', i.id, 'EmpireEvent', x.id FROM inc i CROSS JOIN LATERAL jsonb_array_elements_text(i.event_ids) AS named(id) JOIN ev x ON x.id = named.id
      UNION SELECT 'ON_TOOLSET', 'Incident', id, 'Toolset', toolset FROM inc)
    SELECT 'e|' || kind || '|' || sk || '|' || skey || '|' || dk || '|' || dkey AS identity FROM edges`;
  return { nodes, edges };
}

/** Makes the transaction one read-only snapshot (its first statement). */
export async function readOnlySnapshot(tx: Db): Promise<void> {
  await tx.execute(sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
}

/**
 * The rows the planner's statistics assume the graph tables hold (pg_class.reltuples, set by the
 * last ANALYZE or VACUUM, autovacuum's included); null when either table was never analysed.
 * Kept by the database, so it holds across processes and instances.
 */
export async function analysedGraphRows(db: Db): Promise<number | null> {
  const [row] = rowsOf<{ n: unknown; never: unknown }>(
    await db.execute(sql`SELECT sum(greatest(reltuples, 0))::float8 AS n, bool_or(reltuples < 0) AS never FROM pg_class
      WHERE oid IN ('graph_nodes'::regclass, 'graph_edges'::regclass)`),
  );
  return row === undefined || row.never === true || row.never === 't' ? null : Number(row.n);
}

/** Refreshes the planner statistics of the graph tables (the query language's cost guard reads them). */
export async function analyseGraph(db: Db): Promise<void> {
  await db.execute(sql`ANALYZE graph_nodes, graph_edges`);
}
