import type { TSchema } from '@sinclair/typebox';
import { SESSION_COOKIE } from './auth.ts';
import { type Endpoint, ErrorEnvelope, SCOPES } from './registry.ts';

/** TypeBox schemas are JSON Schema plus symbol keys; a JSON round trip leaves plain JSON Schema. */
export function plainSchema(schema: TSchema | null): Record<string, unknown> | null {
  if (schema === null) return null;
  const plain = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  delete plain.$id;
  return plain;
}

const STATUS_TEXT: Record<number, [string, string]> = {
  400: ['BadRequest', 'The body, query or path failed validation, was not JSON, or had the wrong content type.'],
  401: ['Unauthorized', 'No valid bearer token or operator session.'],
  403: ['Forbidden', 'The credential lacks the scope this endpoint needs.'],
  404: ['NotFound', 'No such resource or route.'],
  409: ['Conflict', 'The resource already exists or is in a conflicting state.'],
  413: ['PayloadTooLarge', 'The body is larger than 1 MiB.'],
  429: ['RateLimited', 'Too many requests; see Retry-After.'],
  500: ['Internal', 'An unexpected failure; the body carries a request id.'],
  503: ['Unavailable', 'The database is unreachable; nothing was written.'],
};

function parametersOf(location: 'path' | 'query', schema: TSchema | null) {
  const plain = plainSchema(schema);
  if (!plain) return [];
  const properties = (plain.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((plain.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: location,
      required: location === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

function securityOf(endpoint: Endpoint) {
  if (endpoint.auth === 'none') return [];
  if (endpoint.auth === 'metrics') return [{ metricsToken: [] }, { bearerAuth: [] }];
  if (endpoint.auth === 'tenant-signature') return [{ tenantSignature: [] }];
  return [{ bearerAuth: [] }, { sessionCookie: [] }];
}

/** The OpenAPI 3.1.0 document of the versioned API, derived from the endpoint registry. */
export function buildOpenApi(endpoints: readonly Endpoint[], baseUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  const responses: Record<string, unknown> = {};
  for (const endpoint of endpoints) {
    const operationResponses: Record<string, unknown> = {};
    operationResponses[String(endpoint.status)] = {
      description: endpoint.schemaId ? `\`${endpoint.schemaId}\`` : 'Success',
      content: {
        [endpoint.contentType]: {
          schema: endpoint.contentType === 'application/json' ? plainSchema(endpoint.responseSchema) : { type: 'string' },
          ...(endpoint.contentType === 'application/json' ? { example: endpoint.example } : {}),
        },
      },
    };
    for (const status of endpoint.errorStatuses) {
      const [name, description] = STATUS_TEXT[status] ?? [`Status${status}`, `HTTP ${status}`];
      responses[name] ??= {
        description,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/svc-error.v1' } } },
      };
      operationResponses[String(status)] = { $ref: `#/components/responses/${name}` };
    }
    const operation: Record<string, unknown> = {
      operationId: endpoint.id,
      summary: endpoint.title,
      description: endpoint.description,
      tags: [endpoint.tag],
      security: securityOf(endpoint),
      'x-scope': endpoint.scope,
      'x-kind': endpoint.kind,
      parameters: [...parametersOf('path', endpoint.params), ...parametersOf('query', endpoint.query)],
      responses: operationResponses,
    };
    if (endpoint.body) {
      operation.requestBody = { required: true, content: { 'application/json': { schema: plainSchema(endpoint.body) } } };
    }
    (paths[endpoint.path] ??= {})[endpoint.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Observatory API',
      version: '1.0.0',
      description: 'Honeypot analytics, toolset operations and evidence. Derived from the endpoint registry; the manifest lists the same endpoints.',
    },
    servers: [{ url: baseUrl }],
    tags: [...new Set(endpoints.map((e) => e.tag))].sort().map((name) => ({ name })),
    paths,
    components: {
      schemas: { 'svc-error.v1': plainSchema(ErrorEnvelope) },
      responses,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: `API token \`svctok_…\` carrying scopes: ${SCOPES.join(', ')}.` },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'Operator session from a passkey login.' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'OBSERVATORY_METRICS_TOKEN, for Prometheus scrapes.' },
        tenantSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Observatory-Signature',
          description: '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under the tenant signing secret>`, with `X-Observatory-Tenant: <slug>`.',
        },
      },
    },
  };
}

/** The manifest (spec B, group 1): every endpoint with its scope, schemas and example. */
export function buildManifest(endpoints: readonly Endpoint[], baseUrl: string) {
  return {
    baseUrl,
    scopes: [...SCOPES],
    tags: [...new Set(endpoints.map((e) => e.tag))].sort(),
    endpoints: endpoints.map((e) => ({
      id: e.id,
      title: e.title,
      description: e.description,
      method: e.method,
      path: e.path,
      auth: e.auth,
      scope: e.scope,
      uiPath: e.uiPath,
      tag: e.tag,
      kind: e.kind,
      querySchema: plainSchema(e.query),
      bodySchema: plainSchema(e.body),
      responseSchema: e.contentType === 'application/json' ? plainSchema(e.responseSchema) : null,
      example: e.example,
    })),
  };
}
