import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { SETTLE_MS } from '../../../platform/alerting/plan.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import type { Positioned, Watermark } from '../../../platform/db/keyset.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { notFound } from '../../../platform/errors.ts';
import type { JobDefinition, JobStats } from '../../../platform/jobs/scheduler.ts';
import { type Freshness, freshnessOf, type Producer } from '../../../platform/freshness.ts';
import { EDGE_KIND_NAMES, NODE_KINDS, type NodeKind } from '../kinds.ts';
import { accFromChunkSums, accFromHex, accToHex, addAcc, digestOf, subtractAcc } from './digest.ts';
import type { GraphSources } from './ports.ts';
import { kindLags, type LagBadge, lagBadge, lagSecOf, worstLag } from './lag.ts';
import * as repo from './repository.ts';
import {
  addAttestations,
  addCauses,
  addEmpireEvents,
  addHoneypotEvents,
  BatchBuilder,
  type EdgeSpec,
  edgeKey,
  type GraphBatch,
  incidentNode,
  keyNode,
  type NodeRef,
  type NodeSpec,
  refKey,
  sameProps,
  tenantNode,
  unregisteredProps,
  type VendorRow,
  vendorNode,
  type WriteMode,
} from './sources.ts';

/** Differences replay lists per array. */
export const REPLAY_LIST_CAP = 50;

export const JOB_NAME = 'graph-materialise';
/** Every minute; a run reflects what was received up to its time less the settle margin (60 s). */
export const JOB_SCHEDULE = '* * * * *';
export const GRAPH_PRODUCER: Producer = { job: JOB_NAME, schedule: JOB_SCHEDULE };
/** Source rows read and written per batch: memory is bounded by this, not by the backlog. */
export const BATCH_ROWS = 5000;
/**
 * Rows one run reads from one stream at most: a backlog is worked off over several runs, each
 * ending in bounded time; the kind's lag then reports how far it still is.
 */
export const MAX_ROWS_PER_RUN = 250_000;

/** The stream sources, in the order a run reads them, with the node kinds whose lag each one sets. */
const STREAMS = [
  { name: 'honeypot_events', kinds: ['Fingerprint', 'Cluster'] },
  { name: 'empire_events', kinds: ['EmpireEvent', 'Toolset'] },
  { name: 'provenance_attestations', kinds: ['Attestation'] },
] as const satisfies readonly { name: string; kinds: readonly NodeKind[] }[];
type StreamName = (typeof STREAMS)[number]['name'];
/** Kinds compared whole against their table (or the vendor registry) each run: reflected up to the run's now. */
const WHOLE_KINDS = ['Tenant', 'Vendor', 'Key', 'Incident'] as const satisfies readonly NodeKind[];
/** Kinds that exist only as an edge's end; removed once no live edge names them. */
const DERIVED_KINDS = ['Toolset', 'Cluster'] as const satisfies readonly NodeKind[];

export interface GraphMaterialiserDeps {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  /** The honeypot vendor registry as it is now (`honeypot.registry.current.vendors`). */
  vendors: () => readonly VendorRow[];
  /** The reads of the domains the graph is drawn from (ports.ts). */
  sources: GraphSources;
  /** Batch size and per-run cap; tests make them small to exercise batching. */
  limits?: { batchRows?: number; maxRowsPerRun?: number };
}

const materialisedAtByKind = async (db: Db) => new Map((await repo.kindStates(db)).map((s) => [s.kind, s.materialisedAt]));

export interface RunView {
  id: string;
  trigger: 'schedule' | 'manual';
  outcome: 'running' | 'ok' | 'error';
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
  errorText: string | null;
  digest: string | null;
  stats: Record<string, unknown>;
}

const toRunView = (r: repo.RunRow): RunView => ({
  id: r.id,
  trigger: r.trigger as RunView['trigger'],
  outcome: r.outcome as RunView['outcome'],
  startedAt: r.startedAt.toISOString(),
  finishedAt: r.finishedAt?.toISOString() ?? null,
  durationMs: r.durationMs,
  errorText: r.errorText,
  digest: r.digest,
  stats: r.stats,
});

interface RunContext {
  tx: Db;
  seq: number;
  at: Date;
}

export function createGraphMaterialiser(deps: GraphMaterialiserDeps) {
  const { db, clock, log, sources } = deps;
  const batchRows = deps.limits?.batchRows ?? BATCH_ROWS;
  const maxRowsPerRun = deps.limits?.maxRowsPerRun ?? MAX_ROWS_PER_RUN;

  /** Writes a batch: nodes first (every mode), then edges between their ids. */
  async function apply(ctx: RunContext, batch: GraphBatch, extraRefs: readonly NodeRef[] = []): Promise<void> {
    const ids = new Map<string, number>();
    for (const mode of ['replace', 'merge', 'ensure'] as const satisfies readonly WriteMode[]) {
      for (const [k, id] of await repo.writeNodes(ctx.tx, batch.nodes[mode], mode, ctx)) ids.set(k, id);
    }
    const missing = extraRefs.filter((r) => !ids.has(refKey(r)));
    for (const [k, id] of await repo.nodeIds(ctx.tx, missing)) ids.set(k, id);
    for (const mode of ['replace', 'merge', 'ensure'] as const satisfies readonly WriteMode[]) {
      await repo.writeEdges(ctx.tx, batch.edges[mode], mode === 'replace' ? 'ensure' : mode, ids, ctx);
    }
  }

  /**
   * Reads one stream from its watermark up to `cutoff` in batches, applying each; returns the new
   * watermark, the rows read and whether the stream was drained (false when the per-run cap
   * stopped it).
   */
  async function readStream<T>(
    read: (watermark: Watermark | null, limit: number) => Promise<Positioned<T>[]>,
    applyBatch: (rows: T[], end: Watermark) => Promise<void>,
    start: Watermark | null,
  ): Promise<{ watermark: Watermark | null; read: number; drained: boolean; lastTime: Date | null }> {
    let watermark = start;
    let lastTime: Date | null = null;
    let count = 0;
    for (;;) {
      const limit = Math.min(batchRows, maxRowsPerRun - count);
      // At the cap: drained only if nothing is left (one row looked at, not applied).
      if (limit <= 0) return { watermark, read: count, drained: (await read(watermark, 1)).length === 0, lastTime };
      const rows = await read(watermark, limit);
      if (rows.length === 0) return { watermark, read: count, drained: true, lastTime };
      watermark = rows.at(-1)!.position;
      lastTime = rows.at(-1)!.time;
      count += rows.length;
      await applyBatch(
        rows.map((r) => r.row),
        watermark,
      );
      if (rows.length < limit) return { watermark, read: count, drained: true, lastTime };
    }
  }

  async function materialiseStreams(ctx: RunContext, states: Map<string, repo.KindStateRow>, cutoff: Date) {
    const results = new Map<StreamName, Awaited<ReturnType<typeof readStream>>>();
    const startOf = (name: StreamName) => states.get(STREAMS.find((s) => s.name === name)!.kinds[0])?.watermark ?? null;

    results.set(
      'honeypot_events',
      await readStream(
        (w, limit) => sources.honeypot.eventsAfter(ctx.tx, w, cutoff, limit),
        async (rows) => {
          const batch = new BatchBuilder();
          addHoneypotEvents(batch, rows);
          await apply(ctx, batch.build());
        },
        startOf('honeypot_events'),
      ),
    );
    results.set(
      'empire_events',
      await readStream(
        (w, limit) => sources.empire.eventsAfter(ctx.tx, w, cutoff, limit),
        async (rows, end) => {
          const batch = new BatchBuilder();
          addEmpireEvents(batch, rows);
          await apply(ctx, batch.build());
          // Causes after the batch's own nodes exist: a pair may join two events of this batch.
          const causes = new BatchBuilder();
          const pairs = await sources.empire.causePairs(ctx.tx, rows, end);
          addCauses(causes, pairs);
          await apply(ctx, causes.build(), pairs.flatMap((p) => [{ kind: 'EmpireEvent' as const, key: p.effectId }, { kind: 'EmpireEvent' as const, key: p.causeId }]));
        },
        startOf('empire_events'),
      ),
    );
    results.set(
      'provenance_attestations',
      await readStream(
        (w, limit) => sources.provenance.attestationsAfter(ctx.tx, w, cutoff, limit),
        async (rows) => {
          const batch = new BatchBuilder();
          addAttestations(batch, rows);
          await apply(ctx, batch.build());
        },
        startOf('provenance_attestations'),
      ),
    );
    return results;
  }

  /**
   * Compares a registry-backed kind whole: writes the nodes whose source row is new or changed,
   * lets `syncEdges` bring the kind's own edges in line, then handles nodes whose row is gone:
   * still named by a live edge → kept, with the unregistered props; otherwise marked removed.
   */
  async function syncRegistry(
    ctx: RunContext,
    kind: NodeKind,
    desired: readonly NodeSpec[],
    syncEdges?: (ids: ReadonlyMap<string, number>) => Promise<{ added: number; removed: number }>,
  ): Promise<{ written: number; removed: number; edgesWritten: number; edgesRemoved: number }> {
    const live = new Map((await repo.liveNodesOf(ctx.tx, kind)).map((n) => [n.key, n]));
    const wanted = new Map(desired.map((n) => [n.key, n]));
    const changed = desired.filter((n) => {
      const now = live.get(n.key);
      return !now || now.toolset !== n.toolset || now.tenant !== n.tenant || !sameProps(now.props, n.props);
    });
    const ids = new Map<string, number>([...live.values()].map((n) => [refKey(n), n.id]));
    for (const [k, id] of await repo.writeNodes(ctx.tx, changed, 'replace', ctx)) ids.set(k, id);
    const edges = syncEdges ? await syncEdges(ids) : { added: 0, removed: 0 };

    const gone = [...live.values()].filter((n) => !wanted.has(n.key));
    const referenced = await repo.referencedNodes(ctx.tx, gone.map((n) => n.id));
    const kept = gone.filter((n) => referenced.has(n.id) && !sameProps(n.props, unregisteredProps(kind, n.key)));
    await repo.writeNodes(ctx.tx, kept.map((n) => ({ ...n, props: unregisteredProps(kind, n.key) })), 'replace', ctx);
    const removed = gone.filter((n) => !referenced.has(n.id)).map((n) => n.id);
    await repo.markNodesRemoved(ctx.tx, removed, ctx.seq);
    return { written: changed.length + kept.length, removed: removed.length, edgesWritten: edges.added, edgesRemoved: edges.removed };
  }

  /** Brings the live edges of `edgeKinds` leaving `srcKind` nodes to exactly `desired`. */
  async function syncOwnedEdges(ctx: RunContext, srcKind: NodeKind, edgeKinds: readonly string[], desired: readonly EdgeSpec[]): Promise<{ added: number; removed: number }> {
    const live = await repo.liveEdgesFrom(ctx.tx, srcKind, edgeKinds);
    const liveKeys = new Set(live.map((e) => edgeKey({ kind: e.kind as EdgeSpec['kind'], src: { kind: srcKind, key: e.srcKey }, dst: { kind: e.dstKind as NodeKind, key: e.dstKey } })));
    const wantedKeys = new Set(desired.map(edgeKey));
    const toAdd = desired.filter((e) => !liveKeys.has(edgeKey(e)));
    const batch = new BatchBuilder();
    for (const e of toAdd) {
      if (e.dst.kind === 'Toolset') batch.ensure(e.dst);
      batch.edge('ensure', e);
    }
    await apply(ctx, batch.build(), toAdd.flatMap((e) => [e.src, e.dst]));
    const toRemove = live.filter((e) => !wantedKeys.has(edgeKey({ kind: e.kind as EdgeSpec['kind'], src: { kind: srcKind, key: e.srcKey }, dst: { kind: e.dstKind as NodeKind, key: e.dstKey } })));
    await repo.markEdgesRemoved(ctx.tx, toRemove.map((e) => e.id), ctx.seq);
    return { added: toAdd.length, removed: toRemove.length };
  }

  async function syncSmallSources(ctx: RunContext) {
    const incidents = await sources.empire.incidents(ctx.tx);
    const incidentStats = await syncRegistry(ctx, 'Incident', incidents.map(incidentNode), async () => {
      // CONCERNS only to events the graph holds: an event still within the settle margin is linked by the run that reads it.
      const named = [...new Set(incidents.flatMap((i) => i.eventIds))].map((key) => ({ kind: 'EmpireEvent' as const, key }));
      const present = await repo.nodeIds(ctx.tx, named, true);
      const desired: EdgeSpec[] = incidents.flatMap((i) => [
        { kind: 'ON_TOOLSET' as const, src: { kind: 'Incident' as const, key: i.id }, dst: { kind: 'Toolset' as const, key: i.toolset }, props: {} },
        ...[...new Set(i.eventIds)]
          .filter((e) => present.has(refKey({ kind: 'EmpireEvent', key: e })))
          .map((e) => ({ kind: 'CONCERNS' as const, src: { kind: 'Incident' as const, key: i.id }, dst: { kind: 'EmpireEvent' as const, key: e }, props: {} })),
      ]);
      return syncOwnedEdges(ctx, 'Incident', ['CONCERNS', 'ON_TOOLSET'], desired);
    });
    const keys = await sources.provenance.keys(ctx.tx);
    const keyStats = await syncRegistry(ctx, 'Key', keys.map(keyNode), () =>
      syncOwnedEdges(
        ctx,
        'Key',
        ['BELONGS_TO'],
        keys.map((k) => ({ kind: 'BELONGS_TO' as const, src: { kind: 'Key' as const, key: k.id }, dst: { kind: 'Toolset' as const, key: k.toolset }, props: {} })),
      ),
    );
    const tenantStats = await syncRegistry(ctx, 'Tenant', (await sources.honeypot.tenants(ctx.tx)).map(tenantNode));
    const vendorStats = await syncRegistry(ctx, 'Vendor', uniqueVendors(deps.vendors()).map(vendorNode));
    const derivedRemoved = await repo.removeUnreferenced(ctx.tx, DERIVED_KINDS, ctx.seq);
    return { Incident: incidentStats, Key: keyStats, Tenant: tenantStats, Vendor: vendorStats, derivedRemoved };
  }

  /** One run at `now` (docs/graph/materialiser.md, "Runs"). */
  async function run(now: Date, trigger: 'schedule' | 'manual'): Promise<JobStats> {
    const id = randomUUID();
    const began = performance.now();
    await repo.insertRunningRun(db, { id, trigger, startedAt: clock.now() });
    try {
      const stats = await withTransaction(db, async (tx) => {
        await repo.lockMaterialiser(tx);
        const seq = await repo.redrawSeq(tx, id);
        const ctx: RunContext = { tx, seq, at: now };
        const previous = await repo.lastOkRun(tx);
        const states = new Map((await repo.kindStates(tx)).map((s) => [s.kind, s]));
        const cutoff = new Date(now.getTime() - SETTLE_MS);

        const streams = await materialiseStreams(ctx, states, cutoff);
        const small = await syncSmallSources(ctx);

        const nodesAdded = await repo.identitySums(tx, repo.nodesAddedBy(seq));
        const nodesRemoved = await repo.identitySums(tx, repo.nodesRemovedBy(seq));
        const edgesAdded = await repo.identitySums(tx, repo.edgesAddedBy(seq));
        const edgesRemoved = await repo.identitySums(tx, repo.edgesRemovedBy(seq));
        let acc = accFromHex(previous?.digestAcc);
        for (const added of [nodesAdded, edgesAdded]) acc = addAcc(acc, accFromChunkSums(added.chunkSums));
        for (const removed of [nodesRemoved, edgesRemoved]) acc = subtractAcc(acc, accFromChunkSums(removed.chunkSums));
        const nodeCount = (previous?.nodeCount ?? 0) + nodesAdded.count - nodesRemoved.count;
        const edgeCount = (previous?.edgeCount ?? 0) + edgesAdded.count - edgesRemoved.count;
        const digest = digestOf(acc, nodeCount, edgeCount);

        const watermarks: Record<string, Watermark | null> = {};
        for (const stream of STREAMS) {
          const result = streams.get(stream.name)!;
          watermarks[stream.name] = result.watermark;
          // Drained: everything received up to the cutoff is in. Stopped by the cap: up to the last row read.
          const reflected = result.drained || result.lastTime === null ? cutoff : result.lastTime;
          for (const kind of stream.kinds) await repo.saveKindState(tx, kind, { watermark: result.watermark, materialisedAt: reflected, updatedAt: clock.now() });
        }
        for (const kind of WHOLE_KINDS) await repo.saveKindState(tx, kind, { watermark: null, materialisedAt: now, updatedAt: clock.now() });

        const stats = {
          materialisationId: id,
          seq,
          honeypotEventsRead: streams.get('honeypot_events')!.read,
          empireEventsRead: streams.get('empire_events')!.read,
          attestationsRead: streams.get('provenance_attestations')!.read,
          drained: [...streams.values()].every((s) => s.drained),
          nodesAdded: nodesAdded.count,
          nodesRemoved: nodesRemoved.count,
          edgesAdded: edgesAdded.count,
          edgesRemoved: edgesRemoved.count,
          registryNodesWritten: small.Incident.written + small.Key.written + small.Tenant.written + small.Vendor.written,
          nodes: nodeCount,
          edges: edgeCount,
          digest,
        };
        await repo.finishRun(tx, id, {
          outcome: 'ok',
          finishedAt: clock.now(),
          durationMs: Math.round(performance.now() - began),
          errorText: null,
          stats,
          digest,
          digestAcc: accToHex(acc),
          nodeCount,
          edgeCount,
          watermarks,
        });
        return stats;
      });
      await refreshPlannerStatistics(stats.nodes + stats.edges);
      return stats;
    } catch (error) {
      const errorText = error instanceof Error ? error.message : String(error);
      log.warn({ err: error, materialisationId: id }, 'graph materialiser run failed');
      await repo.finishRun(db, id, { outcome: 'error', finishedAt: clock.now(), durationMs: Math.round(performance.now() - began), errorText, stats: {} });
      throw error;
    }
  }

  /**
   * The query language refuses costly queries on PGlite by the planner's estimate (PGlite does not
   * enforce statement_timeout and runs no autovacuum), and the estimate is only as good as the
   * statistics: they are refreshed when the graph tables were never analysed, and when the graph
   * (live nodes and edges) grew by a tenth, and at least 1,000 rows, beyond the row count the
   * statistics assume (pg_class.reltuples). That count is the database's, not this process's: a
   * new process or instance does not analyse again a graph that has not grown, and a run that
   * adds a few rows to a large graph does not pay for an ANALYZE (which reads up to 30,000 pages
   * of each table, whatever the run changed).
   */
  async function refreshPlannerStatistics(size: number): Promise<void> {
    const analysed = await repo.analysedGraphRows(db);
    if (analysed !== null && size - analysed < Math.max(1000, analysed / 10)) return;
    await repo.analyseGraph(db);
  }

  async function lags(now: Date, via: Db = db) {
    return kindLags(await materialisedAtByKind(via), now);
  }

  /**
   * The worst lag over all kinds, or `nodeKind`'s; null when never materialised or not a node kind
   * (the empire predicate graph_lag_gte). `via` is the caller's transaction when it holds one: the
   * alert evaluation asks inside a rule's transaction, and on PGlite (one connection) a read
   * outside it would wait for that very transaction.
   */
  async function lagSec(nodeKind?: string, via: Db = db): Promise<number | null> {
    const all = await lags(clock.now(), via);
    if (nodeKind === undefined) return worstLag(all)?.lagSec ?? null;
    return all.find((l) => l.kind === nodeKind)?.lagSec ?? null;
  }

  /**
   * How fresh an answer over `kinds` is: the oldest of their materialisation instants (a query's
   * rows may join any of them), null until the materialiser has reflected every one of them.
   */
  async function freshness(kinds: readonly NodeKind[]): Promise<Freshness> {
    const now = clock.now();
    const wanted = (await lags(now)).filter((l) => kinds.includes(l.kind));
    const never = wanted.filter((l) => l.materialisedAt === null).map((l) => l.kind);
    if (never.length > 0) {
      return freshnessOf(GRAPH_PRODUCER, null, `The graph has not materialised ${never.join(', ')} yet: the first ${JOB_NAME} run does (every minute, or on demand).`);
    }
    const oldest = wanted.reduce<Date | null>((min, l) => (min === null || l.materialisedAt!.getTime() < min.getTime() ? l.materialisedAt : min), null);
    return freshnessOf(GRAPH_PRODUCER, oldest ?? now);
  }

  /** Every node kind's lag in seconds (null: never materialised), for the metrics gauge. */
  async function lagByKind(): Promise<Map<string, number | null>> {
    return new Map((await lags(clock.now())).map((l) => [l.kind, l.lagSec]));
  }

  /** The latest completed materialisation's id, stored digest and end (the federation's graph digest); null before the first. */
  async function latestDigest(): Promise<{ materialisationId: string; digest: string; finishedAt: string } | null> {
    const run = await repo.lastOkRun(db);
    if (run === null || run.digest === null) return null;
    return { materialisationId: run.id, digest: run.digest, finishedAt: (run.finishedAt ?? run.startedAt).toISOString() };
  }

  async function slo() {
    const now = clock.now();
    const [all, counts] = await Promise.all([lags(now), repo.countsByKind(db)]);
    const worst = worstLag(all);
    return {
      worstLagSec: worst?.lagSec ?? null,
      worstLagKind: worst?.kind ?? null,
      overallBadge: lagBadge(worst?.lagSec ?? null),
      perKind: all.map((l) => ({
        badge: lagBadge(l.lagSec) as LagBadge,
        count: counts.nodes.get(l.kind) ?? 0,
        kind: l.kind,
        lagSec: l.lagSec,
        oldestMaterialisedAt: l.materialisedAt?.toISOString() ?? null,
      })),
    };
  }

  async function status(recent: number) {
    const now = clock.now();
    const [runs, counts, all] = await Promise.all([repo.recentRuns(db, recent), repo.countsByKind(db), lags(now)]);
    const worst = worstLag(all);
    const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
    return {
      latestRun: runs[0] ? toRunView(runs[0]) : null,
      recentRuns: runs.map(toRunView),
      totals: { nodes: sum(counts.nodes), edges: sum(counts.edges) },
      nodesByKind: NODE_KINDS.map((kind) => ({ kind, count: counts.nodes.get(kind) ?? 0 })),
      edgesByKind: EDGE_KIND_NAMES.map((kind) => ({ kind, count: counts.edges.get(kind) ?? 0 })),
      oldestMaterialisedAt: worst?.materialisedAt?.toISOString() ?? null,
      oldestLagSec: worst?.lagSec ?? null,
    };
  }

  /**
   * Rebuilds from the sources the identity set run `materialisationId` produced (docs/graph/materialiser.md,
   * "Replay") and compares it with the digest the run stored and with the graph rows as of that run.
   */
  async function replay(materialisationId: string) {
    const stored = await repo.runById(db, materialisationId);
    if (!stored || stored.outcome !== 'ok' || stored.digest === null) {
      throw notFound(stored ? `Graph materialisation ${materialisationId} did not complete (${stored.outcome}); only completed runs can be replayed.` : `No graph materialisation ${materialisationId}.`);
    }
    const liveAt = clock.now();
    const marks = stored.watermarks as Partial<Record<StreamName, Watermark | null>>;
    const live = repo.liveIdentities({
      honeypotEvents: sources.honeypot.replay.eventsUpTo(marks.honeypot_events ?? null),
      tenants: sources.honeypot.replay.tenants(),
      empireEvents: sources.empire.replay.eventsUpTo(marks.empire_events ?? null),
      incidents: sources.empire.replay.incidents(),
      attestations: sources.provenance.replay.attestationsUpTo(marks.provenance_attestations ?? null),
      keys: sources.provenance.replay.keys(),
      vendorIds: uniqueVendors(deps.vendors()).map((v) => v.id),
    });
    const storedNodes = repo.storedNodesAsOf(stored.seq);
    const storedEdges = repo.storedEdgesAsOf(stored.seq);
    // One snapshot for every statement: sources and graph rows written meanwhile must not skew the comparison.
    const { liveNodeSums, liveEdgeSums, addedNodes, removedNodes, addedEdges, removedEdges } = await withTransaction(db, async (tx) => {
      await repo.readOnlySnapshot(tx);
      return {
        liveNodeSums: await repo.identitySums(tx, live.nodes),
        liveEdgeSums: await repo.identitySums(tx, live.edges),
        addedNodes: await repo.difference(tx, live.nodes, storedNodes, REPLAY_LIST_CAP),
        removedNodes: await repo.difference(tx, storedNodes, live.nodes, REPLAY_LIST_CAP),
        addedEdges: await repo.difference(tx, live.edges, storedEdges, REPLAY_LIST_CAP),
        removedEdges: await repo.difference(tx, storedEdges, live.edges, REPLAY_LIST_CAP),
      };
    });
    const liveAcc = addAcc(accFromChunkSums(liveNodeSums.chunkSums), accFromChunkSums(liveEdgeSums.chunkSums));
    const liveDigest = digestOf(liveAcc, liveNodeSums.count, liveEdgeSums.count);
    const differences = addedNodes.count + removedNodes.count + addedEdges.count + removedEdges.count;
    return {
      materialisationId: stored.id,
      matches: liveDigest === stored.digest && differences === 0,
      storedDigest: stored.digest,
      liveDigest,
      storedAt: (stored.finishedAt ?? stored.startedAt).toISOString(),
      liveAt: liveAt.toISOString(),
      addedNodes: addedNodes.sample,
      removedNodes: removedNodes.sample,
      addedEdges: addedEdges.sample,
      removedEdges: removedEdges.sample,
    };
  }

  return {
    run,
    status,
    slo,
    replay,
    /** The newest completed materialisation (what the drift inbox's graph-drift detector replays), or null. */
    async latestOkRun(): Promise<{ id: string; finishedAt: string } | null> {
      const row = await repo.lastOkRun(db);
      return row === null ? null : { id: row.id, finishedAt: (row.finishedAt ?? row.startedAt).toISOString() };
    },
    lagSec,
    latestDigest,
    freshness,
    lagByKind,
    jobs(): JobDefinition[] {
      return [
        {
          name: JOB_NAME,
          description:
            'Materialises the knowledge graph: reads the honeypot events, empire events and attestations received since the last run (up to now − 60 s), compares tenants, vendors, keys and incidents whole, updates nodes, edges and the materialisation digest.',
          schedule: JOB_SCHEDULE,
          run: ({ now, trigger }) => run(now, trigger),
        },
      ];
    },
  };
}

export type GraphMaterialiser = ReturnType<typeof createGraphMaterialiser>;

/** The registry's vendors, one per id (a replacement file could repeat one). */
function uniqueVendors(vendors: readonly VendorRow[]): VendorRow[] {
  return [...new Map(vendors.map((v) => [v.id, v])).values()];
}
