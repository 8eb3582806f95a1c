import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, LONG_WORK_TIMEOUT_MS, Nullable, PageLimitParam, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { EDGE_KIND_NAMES, NODE_KINDS } from '../kinds.ts';
import { LAG_BADGE_THRESHOLDS_SEC } from './lag.ts';
import { type GraphMaterialiser, REPLAY_LIST_CAP } from './service.ts';

export const RECENT_DEFAULT = 10;
export const RECENT_MAX = 100;

/** The knowledge-graph materialiser's reads (spec B group 3; docs/graph/materialiser.md). */

const generatedAt = '2026-11-26T08:00:00.000Z';
const TAG = 'graph';
const UI_PATH = '/empire/graph';
const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const Hex64 = (description: string) => Type.String({ pattern: '^[0-9a-f]{64}$', description });
const BADGES = ['green', 'yellow', 'red', 'unknown'] as const;
const BADGE_TEXT = `green at most ${LAG_BADGE_THRESHOLDS_SEC.green} s, yellow at most ${LAG_BADGE_THRESHOLDS_SEC.yellow} s, red beyond, unknown when never materialised.`;

const Run = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The materialisation id (replay takes it).' }),
  trigger: StringEnum(['schedule', 'manual'] as const),
  outcome: StringEnum(['running', 'ok', 'error'] as const),
  startedAt: IsoDate,
  finishedAt: Nullable(IsoDate),
  durationMs: Nullable(Type.Integer({ minimum: 0 })),
  errorText: Nullable(Type.String()),
  digest: Nullable(Hex64('The materialisation digest after the run (null unless ok).')),
  stats: Type.Record(Type.String(), Type.Unknown(), { description: 'Rows read per source, nodes and edges added and removed, totals after the run.' }),
});
const KindCount = Type.Object({ kind: Type.String(), count: Type.Integer({ minimum: 0 }) });

const exampleRun = {
  id: '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b',
  trigger: 'schedule',
  outcome: 'ok',
  startedAt: '2026-11-26T07:59:00.000Z',
  finishedAt: '2026-11-26T07:59:00.412Z',
  durationMs: 412,
  errorText: null,
  digest: '3c9a0f5e7b1d2c4e6f8a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e',
  stats: {
    honeypotEventsRead: 1000,
    empireEventsRead: 12,
    attestationsRead: 12,
    drained: true,
    nodesAdded: 31,
    nodesRemoved: 0,
    edgesAdded: 58,
    edgesRemoved: 0,
    nodes: 2417,
    edges: 5120,
  },
};

export function graphMaterialiserEndpoints(materialiser: Pick<GraphMaterialiser, 'status' | 'slo' | 'replay'>): Endpoint[] {
  return [
    defineEndpoint({
      id: 'getGraphMaterialiser',
      title: 'Knowledge-graph materialiser status',
      description: `The latest runs of the materialiser (job \`graph-materialise\`, every minute), live node and edge counts per kind, and the oldest kind's materialisation instant and lag. \`recent\`: runs listed, 1 to ${RECENT_MAX}, default ${RECENT_DEFAULT}.`,
      method: 'GET',
      path: `${V1}/empire/graph/materialiser`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      query: Type.Object({ recent: PageLimitParam(RECENT_DEFAULT, RECENT_MAX) }, { examples: [{ recent: 10 }] }),
      response: {
        schemaId: 'svc-empire-graph-materialiser.v1',
        fields: {
          latestRun: Nullable(Run),
          recentRuns: Type.Array(Run, { description: 'Newest first.' }),
          totals: Type.Object({ nodes: Type.Integer({ minimum: 0 }), edges: Type.Integer({ minimum: 0 }) }),
          nodesByKind: Type.Array(KindCount),
          edgesByKind: Type.Array(KindCount),
          oldestMaterialisedAt: Nullable(IsoDate),
          oldestLagSec: Nullable(Type.Integer({ minimum: 0 })),
        },
      },
      example: {
        schema: 'svc-empire-graph-materialiser.v1',
        generatedAt,
        latestRun: exampleRun,
        recentRuns: [exampleRun],
        totals: { nodes: 2417, edges: 5120 },
        nodesByKind: NODE_KINDS.map((kind, i) => ({ kind, count: [3, 2000, 40, 30, 4, 300, 2, 4, 34][i] ?? 0 })),
        edgesByKind: EDGE_KIND_NAMES.map((kind, i) => ({ kind, count: [2000, 1950, 600, 300, 120, 280, 40, 250, 300, 250, 4, 20, 2][i] ?? 0 })),
        oldestMaterialisedAt: '2026-11-26T07:58:00.000Z',
        oldestLagSec: 120,
      },
      handler: async ({ query }) => materialiser.status(query.recent ?? RECENT_DEFAULT),
    }),
    defineEndpoint({
      id: 'getGraphSlo',
      title: 'Knowledge-graph lag SLO',
      description: `How far behind now each node kind's source is reflected in the graph, with a badge: ${BADGE_TEXT} overallBadge is the worst kind's.`,
      method: 'GET',
      path: `${V1}/empire/graph/slo`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      response: {
        schemaId: 'svc-empire-graph-slo.v1',
        fields: {
          worstLagSec: Nullable(Type.Integer({ minimum: 0 })),
          worstLagKind: Nullable(StringEnum(NODE_KINDS)),
          overallBadge: StringEnum(BADGES),
          perKind: Type.Array(
            Type.Object({
              badge: StringEnum(BADGES),
              count: Type.Integer({ minimum: 0, description: 'Live nodes of the kind.' }),
              kind: StringEnum(NODE_KINDS),
              lagSec: Nullable(Type.Integer({ minimum: 0 })),
              oldestMaterialisedAt: Nullable(Type.String({ format: 'date-time', description: 'The instant up to which the kind\'s source is reflected in the graph.' })),
            }),
          ),
        },
      },
      example: {
        schema: 'svc-empire-graph-slo.v1',
        generatedAt,
        worstLagSec: 120,
        worstLagKind: 'Fingerprint',
        overallBadge: 'green',
        perKind: [
          { badge: 'green', count: 2000, kind: 'Fingerprint', lagSec: 120, oldestMaterialisedAt: '2026-11-26T07:58:00.000Z' },
          { badge: 'green', count: 3, kind: 'Tenant', lagSec: 60, oldestMaterialisedAt: '2026-11-26T07:59:00.000Z' },
        ],
      },
      handler: async () => materialiser.slo(),
    }),
    defineEndpoint({
      id: 'replayGraphMaterialisation',
      title: 'Replay a knowledge-graph materialisation',
      description:
        `Rebuilds from the sources the node and edge identities run {materialisationId} produced (stream rows at or before its watermarks; tenants, vendors, keys and incidents as they are now), ` +
        `computes their digest (liveDigest) and compares it with the digest the run stored; lists up to ${REPLAY_LIST_CAP} identities each that the sources give but the graph rows as of that run lack (added) and the reverse (removed). ` +
        'matches is true when the digests are equal and nothing differs. 404 for an unknown id or a run that did not complete; 400 for an id that is not a uuid. ' +
        'The digest covers the whole graph, every toolset\'s nodes with the rest: a token bound to toolsets is refused (403).',
      method: 'GET',
      path: `${V1}/empire/graph/replay/{materialisationId}`,
      auth: 'session-or-bearer',
      spansEveryToolset: 'a replay of the whole graph (its digest and differences)',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      // A rebuild of the whole graph from its sources: long on a large history.
      timeoutMs: LONG_WORK_TIMEOUT_MS,
      params: Type.Object(
        { materialisationId: Type.String({ pattern: UUID_PATTERN, description: 'A run id from GET {v1}/empire/graph/materialiser.', examples: [exampleRun.id] }) },
        { examples: [{ materialisationId: exampleRun.id }] },
      ),
      response: {
        schemaId: 'svc-empire-graph-replay.v1',
        fields: {
          materialisationId: Type.String({ format: 'uuid' }),
          matches: Type.Boolean(),
          storedDigest: Hex64('The digest the run stored.'),
          liveDigest: Hex64('The digest of the identities rebuilt from the sources now.'),
          storedAt: IsoDate,
          liveAt: IsoDate,
          addedNodes: Type.Array(Type.String(), { maxItems: REPLAY_LIST_CAP, description: 'n|kind|key identities the sources give but the graph did not hold after the run.' }),
          removedNodes: Type.Array(Type.String(), { maxItems: REPLAY_LIST_CAP, description: 'n|kind|key identities the graph held after the run but the sources no longer give.' }),
          addedEdges: Type.Array(Type.String(), { maxItems: REPLAY_LIST_CAP, description: 'e|kind|srcKind|srcKey|dstKind|dstKey identities, as addedNodes.' }),
          removedEdges: Type.Array(Type.String(), { maxItems: REPLAY_LIST_CAP, description: 'e|kind|srcKind|srcKey|dstKind|dstKey identities, as removedNodes.' }),
        },
      },
      example: {
        schema: 'svc-empire-graph-replay.v1',
        generatedAt,
        materialisationId: exampleRun.id,
        matches: false,
        storedDigest: exampleRun.digest,
        liveDigest: '8e2b4d6f0a1c3e5a7b9d1f2a4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e',
        storedAt: exampleRun.finishedAt,
        liveAt: generatedAt,
        addedNodes: [],
        removedNodes: ['n|EmpireEvent|7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d01'],
        addedEdges: [],
        removedEdges: ['e|EMITTED_BY|EmpireEvent|7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d01|Toolset|crawler-lab'],
      },
      handler: async ({ params }) => materialiser.replay(params.materialisationId),
    }),
  ];
}
