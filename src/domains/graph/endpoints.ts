import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, StringEnum, V1 } from '../../platform/http/registry.ts';
import { badRequest } from '../../platform/errors.ts';
import { exampleFreshness, Freshness } from '../../platform/freshness.ts';
import { type NodeKind, type Visibility, visibilityOf } from './kinds.ts';
import { GRAPH_QUERY_EXAMPLES } from './query/examples.ts';
import { GRAPH_PRODUCER } from './materialiser/service.ts';
import type { GraphQueryService } from './query/service.ts';
import { GraphEdgeView, GraphNodeView, kindsRead, MATCH_ROW_CAP, QUERY_LIMIT_DEFAULT, QUERY_LIMIT_MAX, QUERY_TEXT_MAX, TRUNCATION_CAUSES, WALK_ROW_CAP } from './query/service.ts';
import {
  SAVED_QUERY_DESCRIPTION_MAX,
  SAVED_QUERY_NAME_MAX,
  SAVED_QUERY_VISIBILITIES,
  type SavedQueryService,
} from './saved/service.ts';

/** The query endpoint and saved queries of the knowledge graph (spec B group 3; docs/graph/README.md). */

const TAG = 'graph';
const generatedAt = '2026-11-26T08:00:00.000Z';
const who = (principal: Principal | null) => principal as Principal;

/** A query the manifest shows and tests send as is: fingerprints seen on more than one tenant. */
export const EXAMPLE_QUERY =
  "MATCH (f:Fingerprint)-[:SEEN_ON]->(t:Tenant) WHERE f.lastUaClass IN ['LIAR', 'UNVERIFIED_AGENT'] RETURN f.key AS fingerprint, count(t) AS tenants ORDER BY tenants DESC LIMIT 10";

/**
 * The request examples: EXAMPLE_QUERY first (the one sent as is), then the other worked examples
 * of docs/graph/query.md, which the console offers to pick from.
 */
const QUERY_BODY_EXAMPLES = [
  { query: EXAMPLE_QUERY, limit: 50 },
  ...GRAPH_QUERY_EXAMPLES.filter((e) => e.query.split(/\s+/).join(' ') !== EXAMPLE_QUERY).map((e) => ({ query: e.query, limit: 100 })),
];

const SavedQuery = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  description: Type.String(),
  query: Type.String(),
  visibility: StringEnum(SAVED_QUERY_VISIBILITIES),
  ownerUserId: Type.String(),
  runCount: Type.Integer({ minimum: 0 }),
  lastRunAt: Nullable(IsoDate),
  createdAt: IsoDate,
  updatedAt: IsoDate,
});

const exampleSaved = {
  id: '5d6e7f80-91a2-4b3c-8d4e-5f60718293a4',
  name: 'liars-on-several-tenants',
  description: 'Fingerprints that lie about being an AI vendor on more than one honeypot.',
  query: EXAMPLE_QUERY,
  visibility: 'workspace' as const,
  ownerUserId: 'b6a0c1d2-3e4f-4a5b-8c6d-7e8f9a0b1c2d',
  runCount: 3,
  lastRunAt: generatedAt,
  createdAt: '2026-11-20T09:12:00.000Z',
  updatedAt: '2026-11-24T16:40:00.000Z',
};

export function graphQueryEndpoints(deps: {
  queries: GraphQueryService;
  saved: SavedQueryService;
  /** The materialiser's freshness of these node kinds (read before the query runs, so it is a lower bound). */
  freshness: (kinds: readonly NodeKind[]) => Promise<Freshness>;
}): Endpoint[] {
  const { queries, saved } = deps;
  const run = async (query: string, limit: number | undefined, visibility: Visibility) => {
    const freshness = await deps.freshness(kindsRead(queries.parse(query), visibility));
    const result = await queries.execute({ query, ...(limit !== undefined ? { limit } : {}), visibility });
    return { ...result, freshness };
  };
  return [
    defineEndpoint({
      id: 'runGraphQuery',
      title: 'Run a graph query',
      description:
        `Runs a read-only query over the knowledge graph in a subset of openCypher (MATCH, WHERE, RETURN, ORDER BY, LIMIT; grammar and examples in docs/graph/query.md). Send \`query\` (at most ${QUERY_TEXT_MAX} characters) or \`savedName\` (a saved query you may see: your own, else the one workspace or public query of that name), not both. ` +
        `Rows are capped at \`limit\` (1 to ${QUERY_LIMIT_MAX}, default ${QUERY_LIMIT_DEFAULT}) and by the query's own LIMIT. The caller sees only node kinds its scopes allow (Tenant needs read:tenants; Fingerprint and Cluster need read:clusters) and, with a token bound to toolsets, only those toolsets' nodes. ` +
        `A query enumerates at most ${MATCH_ROW_CAP.toLocaleString('en')} matches and each variable-length relationship at most ${WALK_ROW_CAP.toLocaleString('en')} paths from one node; beyond, the answer is cut and says so in \`truncated\`. ` +
        'Invalid text is 400 `invalid-query` with `line`, `column` and `expected`; a query running past the statement timeout (5 s) is stopped and answered 400 `query-timeout`. ' +
        'The graph is materialised by the job `graph-materialise` every minute from what was received up to 60 s before it runs, so an event shows up 1 to 2 minutes after ingest: `freshness.asOf` is the instant up to which the node kinds the query reads are materialised (null, with `reason`, before the first run).',
      method: 'POST',
      path: `${V1}/empire/graph/query`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/empire/graph',
      errors: [409],
      // Each query may hold a database connection up to its statement timeout (OBSERVATORY_GRAPH_QUERY_CONCURRENCY).
      concurrency: 'graph-query',
      body: Type.Object(
        {
          query: Type.Optional(Type.String({ minLength: 1, maxLength: QUERY_TEXT_MAX, description: 'The query text.' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: QUERY_LIMIT_MAX, description: `Most rows answered (default ${QUERY_LIMIT_DEFAULT}).` })),
          savedName: Type.Optional(Type.String({ minLength: 1, maxLength: SAVED_QUERY_NAME_MAX, description: 'Runs this saved query instead of `query`.' })),
        },
        { additionalProperties: false, examples: QUERY_BODY_EXAMPLES },
      ),
      response: {
        schemaId: 'svc-empire-graph-query.v1',
        fields: {
          query: Type.String({ description: 'The text that ran (a saved query\'s text when run by savedName).' }),
          ast: Type.Unknown({ description: 'The parsed query (docs/graph/query.md, "AST").' }),
          rowCount: Type.Integer({ minimum: 0 }),
          rows: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'One object per result row, keyed by each RETURN item\'s alias (or its text).' }),
          nodes: Type.Array(GraphNodeView, {
            description: 'The distinct nodes of the answered matches: every node of each match for a plain query; only the nodes returned whole in the rows for a query with count() or DISTINCT.',
          }),
          edges: Type.Array(GraphEdgeView, {
            description: 'The distinct edges of the answered matches (variable-length paths included) for a plain query; only edges returned whole for a query with count() or DISTINCT.',
          }),
          truncated: Type.Boolean({
            description: `True when the pattern had more matches than a query enumerates (${MATCH_ROW_CAP.toLocaleString('en')}) or a variable-length relationship more paths from one node (${WALK_ROW_CAP.toLocaleString('en')}): rows, counts and order are those of the matches before the cut. Narrow the pattern for a whole answer.`,
          }),
          truncatedBy: Type.Array(StringEnum(TRUNCATION_CAUSES), { description: 'Which caps cut the answer: `match-rows`, `walk-rows`; empty when not truncated.' }),
          freshness: Freshness,
        },
      },
      example: {
        schema: 'svc-empire-graph-query.v1',
        generatedAt,
        query: EXAMPLE_QUERY,
        ast: { type: 'query' },
        rowCount: 1,
        rows: [{ fingerprint: 'shop-eu/fp_3c9a1e0b7d2f4a6c', tenants: 2 }],
        nodes: [],
        edges: [],
        truncated: false,
        truncatedBy: [],
        freshness: exampleFreshness(GRAPH_PRODUCER, '2026-11-26T07:59:00.000Z'),
      },
      handler: async ({ body, principal }) => {
        const caller = who(principal);
        if ((body.query === undefined) === (body.savedName === undefined)) {
          throw badRequest('invalid-body', 'Send exactly one of body.query and body.savedName.');
        }
        const visibility = visibilityOf(caller);
        if (body.savedName !== undefined) {
          const stored = await saved.resolve(caller.userId, body.savedName);
          const result = await run(stored.query, body.limit, visibility);
          await saved.recordRun(stored.id);
          return result;
        }
        return run(body.query as string, body.limit, visibility);
      },
    }),
    defineEndpoint({
      id: 'listGraphSavedQueries',
      title: 'List saved graph queries',
      description: 'Saved graph queries visible to the caller (every workspace and public query, and the caller\'s private ones), sorted by name.',
      method: 'GET',
      path: `${V1}/empire/graph/saved-queries`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/empire/graph',
      response: { schemaId: 'svc-empire-graph-saved-queries.v1', fields: { rows: Type.Array(SavedQuery) } },
      example: { schema: 'svc-empire-graph-saved-queries.v1', generatedAt, rows: [exampleSaved] },
      handler: async ({ principal }) => ({ rows: await saved.list(who(principal).userId) }),
    }),
    defineEndpoint({
      id: 'saveGraphQuery',
      title: 'Save a graph query',
      description:
        'Creates or replaces (by name) one of the caller\'s saved graph queries. The text is parsed first: an invalid query is refused with the parser\'s reason (400 `invalid-query`, with `line`, `column` and `expected`) and nothing is stored. `visibility` is `private` (default on create; only you), `workspace` or `public` (every operator); a replacement keeps the description and visibility it is not sent and the run counts. ' +
        'At most 500 saved queries per operator (409 `limit-reached`). Audited as graph.saved-query-upsert.',
      method: 'POST',
      path: `${V1}/empire/graph/saved-queries`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'write',
      uiPath: '/empire/graph',
      errors: [409],
      body: Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: SAVED_QUERY_NAME_MAX }),
          query: Type.String({ minLength: 1, maxLength: QUERY_TEXT_MAX }),
          description: Type.Optional(Type.String({ maxLength: SAVED_QUERY_DESCRIPTION_MAX })),
          visibility: Type.Optional(StringEnum(SAVED_QUERY_VISIBILITIES)),
        },
        {
          additionalProperties: false,
          examples: [{ name: exampleSaved.name, query: EXAMPLE_QUERY, description: exampleSaved.description, visibility: 'workspace' }],
        },
      ),
      response: {
        schemaId: 'svc-empire-graph-saved-queries.v1',
        fields: { ok: Type.Boolean(), created: Type.Boolean({ description: 'false when an existing query of that name was replaced.' }), row: SavedQuery },
      },
      example: { schema: 'svc-empire-graph-saved-queries.v1', generatedAt, ok: true, created: true, row: { ...exampleSaved, runCount: 0, lastRunAt: null } },
      handler: async ({ body, principal, requestId }) => ({ ok: true, ...(await saved.save({ principal: who(principal), requestId }, body)) }),
    }),
  ];
}
