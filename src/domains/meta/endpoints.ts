import { readFileSync } from 'node:fs';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { type Clock, systemClock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/client.ts';
import { unavailable } from '../../platform/errors.ts';
import { CONSOLE_PATH, consoleBuilt } from '../../platform/http/console.ts';
import { alsoServedAs, buildManifest, buildOpenApi } from '../../platform/http/openapi.ts';
import { defineEndpoint, type Endpoint, Nullable, V1 } from '../../platform/http/registry.ts';
import type { Metrics } from '../../platform/metrics.ts';

const generatedAt = '2026-11-23T08:00:00.000Z';

const ManifestEntry = Type.Object({
  id: Type.String(),
  title: Type.String(),
  description: Type.String(),
  method: Type.String(),
  path: Type.String(),
  auth: Type.String(),
  scope: Nullable(Type.String()),
  uiPath: Nullable(Type.String()),
  tag: Type.String(),
  kind: Type.Union([Type.Literal('read'), Type.Literal('write')]),
  paramsSchema: Type.Unknown({ description: 'The path parameters (JSON Schema, with a request example), or null.' }),
  querySchema: Type.Unknown(),
  bodySchema: Type.Unknown(),
  responseSchema: Type.Unknown(),
  example: Type.Unknown(),
  sameAnswerAs: Type.Optional(
    Type.Object(
      { method: Type.String(), path: Type.String(), query: Type.Record(Type.String(), Type.String()) },
      { description: 'Another operation that gives this same answer with that query (the federated overview is GET {v1}/empire/overview?federated=1); only present when there is one.' },
    ),
  ),
});

/** The service's name and version, as package.json says them. */
const PACKAGE = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

/** Where a visitor of `/` goes next: this API's documents, health, and the public agent API's documents. */
const INDEX_LINKS = [
  { rel: 'manifest', href: `${V1}/manifest`, title: 'Endpoint manifest (API token or operator session)' },
  { rel: 'openapi', href: `${V1}/openapi.json`, title: 'OpenAPI 3.1 document of this API (API token or operator session)' },
  { rel: 'health', href: '/healthz', title: 'Liveness' },
  { rel: 'ready', href: '/readyz', title: 'Readiness: database reachable and migrated' },
  { rel: 'agent-api-openapi', href: '/api/openapi.json', title: 'Public agent API: OpenAPI 3.0.3 document' },
  { rel: 'agent-api-discovery', href: '/.well-known/agent-api', title: 'Public agent API: discovery document' },
] as const;

const IndexLink = Type.Object({ rel: Type.String(), href: Type.String(), title: Type.String() });
const IndexDocument = Type.Object({
  schema: Type.Literal('svc-observatory-index.v1'),
  generatedAt: Type.String({ format: 'date-time' }),
  name: Type.String(),
  version: Type.String(),
  baseUrl: Type.String(),
  links: Type.Array(IndexLink),
});

/**
 * Whether an Accept header prefers HTML to JSON. Each is weighed by its most specific matching
 * range (the exact type, then its `text/` or `application/` wildcard, then the any-type wildcard),
 * and HTML wins only when weighed higher: a browser, which lists text/html first and the any-type
 * wildcard at q=0.8, gets HTML; curl (any type), no header or application/json get JSON.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranges = accept.split(',').map((part) => {
    const [range = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    return { range, weight: Number.isFinite(weight) ? weight : 0 };
  });
  const weigh = (type: string) => {
    const [major] = type.split('/');
    for (const candidate of [type, `${major}/*`, '*/*']) {
      const match = ranges.find((r) => r.range === candidate);
      if (match) return match.weight;
    }
    return 0;
  };
  return weigh('text/html') > weigh('application/json');
}

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The index as a small HTML page: name, version and the same links (all constants; escaped anyway). */
function indexHtml(version: string, withConsole: boolean): string {
  // A browser is sent on to the console when it is built (http/console.ts); the links stay for
  // anything that does not follow the refresh.
  const toConsole = withConsole ? `\n    <meta http-equiv="refresh" content="0; url=${CONSOLE_PATH}/">` : '';
  const consoleLink = withConsole ? `\n    <p><a href="${CONSOLE_PATH}/">Open the console</a></p>` : '';
  const items = INDEX_LINKS.map((l) => `      <li><a href="${escapeHtml(l.href)}"><code>${escapeHtml(l.href)}</code></a> ${escapeHtml(l.title)}</li>`).join('\n');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Observatory ${escapeHtml(version)}</title>${toConsole}
  </head>
  <body>
    <h1>Observatory <small>${escapeHtml(version)}</small></h1>
    <p>Honeypot analytics, toolset operations and evidence. The API answers JSON; the documents below list every endpoint.</p>${consoleLink}
    <ul>
${items}
    </ul>
  </body>
</html>
`;
}

export interface MetaDeps {
  /** Every endpoint of the app, this group's included; read when asked, after the app is built. */
  endpoints: () => readonly Endpoint[];
  baseUrl: string;
  database: Database;
  metrics: Metrics;
  /** For the index's generatedAt; the system clock unless given. */
  clock?: Clock;
}

export function metaEndpoints(deps: MetaDeps): Endpoint[] {
  // The registry cannot change after start-up, so both documents are built once, on first ask.
  let manifest: ReturnType<typeof buildManifest> | null = null;
  let openapi: ReturnType<typeof buildOpenApi> | null = null;
  const clock = deps.clock ?? systemClock;
  // Read once, as the server reads the build it serves once at start (http/console.ts).
  const withConsole = consoleBuilt();
  return [
    defineEndpoint<never, never, never, never, true>({
      id: 'getIndex',
      title: 'Service index',
      description:
        'What the printed address shows: the service name, its version and links to the manifest, the OpenAPI document, health, readiness and the public agent API documents. An HTML page when the Accept header prefers text/html (a browser), which sends the browser on to the operator console at `/console/` when the console is built; `svc-observatory-index.v1` JSON otherwise. No auth.',
      method: 'GET',
      path: '/',
      auth: 'none',
      scope: null,
      tag: 'meta',
      kind: 'read',
      response: { raw: alsoServedAs(IndexDocument, { 'text/html': { schema: { type: 'string', description: 'The same links as a page, for a browser.' } } }) },
      example: { schema: 'svc-observatory-index.v1', generatedAt, name: 'Observatory', version: '0.1.0', baseUrl: 'http://localhost:8080', links: INDEX_LINKS.map((l) => ({ ...l })) },
      handler: async ({ request, reply }) => {
        void reply.header('vary', 'Accept');
        // The registry declares one content type per endpoint; the HTML form is sent here, and
        // returning the reply tells the server it is answered.
        if (prefersHtml(request.headers.accept)) return sendHtml(reply, indexHtml(PACKAGE.version, withConsole));
        return {
          schema: 'svc-observatory-index.v1' as const,
          generatedAt: clock.now().toISOString(),
          name: 'Observatory',
          version: PACKAGE.version,
          baseUrl: deps.baseUrl,
          links: INDEX_LINKS.map((l) => ({ ...l })),
        };
      },
    }),
    defineEndpoint({
      id: 'getManifest',
      title: 'Endpoint manifest',
      description: 'Every endpoint with method, path, auth, scope, tag, kind, query, body and response schemas and an example: the single source the OpenAPI document is derived from.',
      method: 'GET',
      path: `${V1}/manifest`,
      auth: 'session-or-bearer',
      scope: null,
      tag: 'meta',
      kind: 'read',
      uiPath: '/docs',
      response: {
        schemaId: 'svc-observatory-manifest.v1',
        fields: {
          baseUrl: Type.String(),
          scopes: Type.Array(Type.String()),
          tags: Type.Array(Type.String()),
          endpoints: Type.Array(ManifestEntry),
        },
      },
      example: {
        schema: 'svc-observatory-manifest.v1',
        generatedAt,
        baseUrl: 'http://localhost:8080',
        scopes: ['read:dashboard'],
        tags: ['meta'],
        endpoints: [
          {
            id: 'getManifest',
            title: 'Endpoint manifest',
            description: 'Every endpoint…',
            method: 'GET',
            path: `${V1}/manifest`,
            auth: 'session-or-bearer',
            scope: null,
            uiPath: '/docs',
            tag: 'meta',
            kind: 'read',
            paramsSchema: null,
            querySchema: null,
            bodySchema: null,
            responseSchema: { type: 'object' },
            example: null,
          },
        ],
      },
      handler: async () => (manifest ??= buildManifest(deps.endpoints(), deps.baseUrl)),
    }),
    defineEndpoint<never, never, never, never, true>({
      id: 'getOpenApi',
      title: 'OpenAPI 3.1 document',
      description: 'The OpenAPI 3.1.0 description of this API (info.version 1.0.0), derived from the manifest.',
      method: 'GET',
      path: `${V1}/openapi.json`,
      auth: 'session-or-bearer',
      scope: null,
      tag: 'meta',
      kind: 'read',
      uiPath: '/docs',
      response: {
        raw: Type.Object({ openapi: Type.String(), info: Type.Object({ title: Type.String(), version: Type.String() }) }, { additionalProperties: true }),
      },
      example: { openapi: '3.1.0', info: { title: 'Observatory API', version: '1.0.0' } },
      handler: async () => (openapi ??= buildOpenApi(deps.endpoints(), deps.baseUrl)),
    }),
    defineEndpoint({
      id: 'getHealth',
      title: 'Liveness',
      description: 'Answers while the process serves HTTP. No auth.',
      method: 'GET',
      path: '/healthz',
      auth: 'none',
      scope: null,
      tag: 'health',
      kind: 'read',
      response: { schemaId: 'svc-health.v1', fields: { status: Type.Literal('ok') } },
      example: { schema: 'svc-health.v1', generatedAt, status: 'ok' },
      handler: async () => ({ status: 'ok' as const }),
    }),
    defineEndpoint({
      id: 'getReadiness',
      title: 'Readiness',
      description: 'Answers 200 when the database is reachable and every migration is applied, 503 otherwise. No auth.',
      method: 'GET',
      path: '/readyz',
      auth: 'none',
      scope: null,
      tag: 'health',
      kind: 'read',
      response: {
        schemaId: 'svc-ready.v1',
        fields: { status: Type.Literal('ready'), database: Type.Union([Type.Literal('node-postgres'), Type.Literal('pglite')]) },
      },
      example: { schema: 'svc-ready.v1', generatedAt, status: 'ready', database: 'pglite' },
      handler: async () => {
        if (!(await deps.database.isReady())) throw unavailable('The database is unreachable or not fully migrated.');
        return { status: 'ready' as const, database: deps.database.driver };
      },
    }),
    defineEndpoint<never, never, never, never, true>({
      id: 'getMetrics',
      title: 'Prometheus metrics',
      description:
        'Request counts and latency per endpoint id and status, job runs and outcomes, database pool use, ingest by tenant, class and toolset, refusals, tarpits, alert deliveries, graph and rollup lag, in Prometheus text format (docs/operations.md, "Metrics"). ' +
        'Send `Authorization: Bearer` with OBSERVATORY_METRICS_TOKEN, or an API token carrying read:dashboard. Series are labelled by toolset, so a token bound to toolsets is refused (403).',
      method: 'GET',
      path: '/metrics',
      auth: 'metrics',
      scope: null,
      tag: 'health',
      kind: 'read',
      spansEveryToolset: 'the Prometheus metrics (labelled by toolset)',
      response: { raw: Type.String(), contentType: 'text/plain; version=0.0.4; charset=utf-8' },
      example: '# HELP observatory_http_requests_total HTTP requests answered, by endpoint id, method and status.\n',
      handler: async () => deps.metrics.registry.metrics(),
    }),
  ];
}

function sendHtml(reply: FastifyReply, html: string): FastifyReply {
  return reply.type('text/html; charset=utf-8').send(html);
}
