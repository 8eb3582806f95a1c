import { Type } from '@sinclair/typebox';
import type { Database } from '../../platform/db/client.ts';
import { unavailable } from '../../platform/errors.ts';
import { buildManifest, buildOpenApi } from '../../platform/http/openapi.ts';
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
  querySchema: Type.Unknown(),
  bodySchema: Type.Unknown(),
  responseSchema: Type.Unknown(),
  example: Type.Unknown(),
});

export interface MetaDeps {
  /** Every endpoint of the app, this group's included; read when asked, after the app is built. */
  endpoints: () => readonly Endpoint[];
  baseUrl: string;
  database: Database;
  metrics: Metrics;
}

export function metaEndpoints(deps: MetaDeps): Endpoint[] {
  // The registry cannot change after start-up, so both documents are built once, on first ask.
  let manifest: ReturnType<typeof buildManifest> | null = null;
  let openapi: ReturnType<typeof buildOpenApi> | null = null;
  return [
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
      description: 'Request counts and latency per endpoint id and status, job runs and outcomes, database pool use, in Prometheus text format. Send `Authorization: Bearer` with OBSERVATORY_METRICS_TOKEN, or an API token carrying read:dashboard.',
      method: 'GET',
      path: '/metrics',
      auth: 'metrics',
      scope: null,
      tag: 'health',
      kind: 'read',
      response: { raw: Type.String(), contentType: 'text/plain; version=0.0.4; charset=utf-8' },
      example: '# HELP observatory_http_requests_total HTTP requests answered, by endpoint id, method and status.\n',
      handler: async () => deps.metrics.registry.metrics(),
    }),
  ];
}
