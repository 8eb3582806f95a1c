import type { TSchema } from '@sinclair/typebox';
import { SESSION_COOKIE } from './auth.ts';
import { type Endpoint, ErrorEnvelope, SCOPES } from './registry.ts';

/**
 * What the documents say of a schema beyond what the server validates with, kept under a symbol
 * key: Ajv and the serializer read string keys only (TypeBox marks `Optional` the same way), so the
 * server's validation is unchanged while the manifest and OpenAPI tell a client the whole rule.
 */
const DOCUMENTS = Symbol.for('observatory.documents');

interface DocumentsNote {
  /** A property a request must carry, though the server's validation lets its absence through. */
  required?: true;
  /** Other media types a raw response may be sent as, each with its OpenAPI media type object. */
  alsoServedAs?: Record<string, Record<string, unknown>>;
}

const noteOf = (schema: unknown): DocumentsNote => ((schema as Record<symbol, DocumentsNote> | null)?.[DOCUMENTS] ?? {});
const withNote = <T extends TSchema>(schema: T, note: DocumentsNote): T => ({ ...schema, [DOCUMENTS]: { ...noteOf(schema), ...note } });

/**
 * A body property the endpoint checks itself, so that leaving it out gets the endpoint's own
 * refusal (spec C, Errors item 3: `ok` false, `reason`, `human`) rather than a svc-error.v1 from
 * validation: optional to the server's validation, required in the manifest and OpenAPI.
 */
export function checkedByEndpoint<T extends TSchema>(schema: T): T {
  return withNote(schema, { required: true });
}

/** A raw response schema whose endpoint may also answer in other media types (the index as HTML). */
export function alsoServedAs<T extends TSchema>(schema: T, content: Record<string, Record<string, unknown>>): T {
  return withNote(schema, { alsoServedAs: content });
}

/** TypeBox schemas are JSON Schema plus symbol keys; a JSON round trip leaves plain JSON Schema. */
export function plainSchema(schema: TSchema | null): Record<string, unknown> | null {
  if (schema === null) return null;
  const plain = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  delete plain.$id;
  return plain;
}

/**
 * A request schema (query or body) as the documents show it: a property with a `default` is not
 * required, whatever the schema's `required` list says. TypeBox lists every property not wrapped
 * in `Type.Optional` as required, default or not; the server's Ajv (`useDefaults`) fills a missing
 * one before `required` is checked, so a client may always leave it out, and the documents say so.
 */
export function requestSchema(schema: TSchema | null): Record<string, unknown> | null {
  const plain = plainSchema(schema);
  if (!plain) return plain;
  const properties = (plain.properties ?? {}) as Record<string, Record<string, unknown> | undefined>;
  // Properties the endpoint checks itself (`checkedByEndpoint`) are required all the same.
  const checked = Object.entries((schema as { properties?: Record<string, unknown> }).properties ?? {})
    .filter(([, property]) => noteOf(property).required)
    .map(([name]) => name);
  const listed = Array.isArray(plain.required) ? (plain.required as string[]) : [];
  const required = [...new Set([...listed, ...checked])].filter((name) => properties[name]?.default === undefined);
  if (required.length > 0) plain.required = required;
  else delete plain.required;
  return plain;
}

/** True when the body has a required field: only then is a request without a body refused. */
export function bodyRequired(schema: TSchema): boolean {
  const required = requestSchema(schema)?.required;
  return Array.isArray(required) && required.length > 0;
}

/** The success response's content: the declared media type, then any the endpoint also answers in. */
function successContent(endpoint: Endpoint, schema: unknown): Record<string, unknown> {
  const json = endpoint.contentType === 'application/json';
  return {
    [endpoint.contentType]: { schema, ...(json ? { example: endpoint.example } : {}) },
    ...noteOf(endpoint.responseSchema).alsoServedAs,
  };
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
  const plain = requestSchema(schema);
  if (!plain) return [];
  const properties = (plain.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((plain.required ?? []) as string[]);
  // The endpoint's request example (object-level `examples`) gives each parameter its value, so a
  // client reading one parameter sees the value the working request sends.
  const request = Array.isArray(plain.examples) ? (plain.examples[0] as Record<string, unknown> | undefined) : undefined;
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    const example = request?.[name];
    return {
      name,
      in: location,
      required: location === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
      ...(example !== undefined ? { example } : {}),
    };
  });
}

/**
 * Points each error status of an operation at a shared `svc-error.v1` response component, adding
 * the component the first time; `variant` lets a document word a status or add headers.
 */
function addErrorResponses(
  endpoint: Endpoint,
  operationResponses: Record<string, unknown>,
  components: Record<string, unknown>,
  variant: { describe?: (status: number) => [string, string] | undefined; headers?: (status: number) => Record<string, unknown> } = {},
): void {
  for (const status of endpoint.errorStatuses) {
    if (status === endpoint.refusedStatus) {
      operationResponses[String(status)] = {
        description: `Refused: \`${endpoint.schemaId}\` with \`ok\` false, \`reason\` and \`human\`; or \`svc-error.v1\` for a request that does not parse.`,
        content: { 'application/json': { schema: { oneOf: [{ $ref: '#/components/schemas/svc-error.v1' }, { type: 'object', required: ['schema', 'ok', 'reason', 'human'] }] } } },
      };
      continue;
    }
    const [name, description] = variant.describe?.(status) ?? STATUS_TEXT[status] ?? [`Status${status}`, `HTTP ${status}`];
    components[name] ??= {
      description,
      ...(variant.headers ? { headers: variant.headers(status) } : {}),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/svc-error.v1' } } },
    };
    operationResponses[String(status)] = { $ref: `#/components/responses/${name}` };
  }
}

function securityOf(endpoint: Endpoint) {
  if (endpoint.auth === 'none') return [];
  if (endpoint.auth === 'metrics') return [{ metricsToken: [] }, { bearerAuth: [] }];
  if (endpoint.auth === 'tenant-signature') return [{ tenantSignature: [] }];
  // The link carries both: OpenAPI ANDs the schemes of one requirement object.
  if (endpoint.auth === 'signed-url') return [{ signedUrlExpires: [], signedUrlSignature: [] }];
  // Anonymous ({}) or with an agent API key in either header.
  if (endpoint.auth === 'agent-key') return [{}, { agentApiKey: [] }, { agentBearer: [] }];
  const operator = [{ bearerAuth: [] }, { sessionCookie: [] }];
  // A peer deployment's shared token, accepted only where the endpoint opts in (spec D7).
  return endpoint.bridge ? [...operator, { bridgeToken: [] }] : operator;
}

/**
 * What both documents say of an operation: id, texts, security, parameters, body and the given
 * responses; `dialect` turns a plain JSON Schema into the document's schema dialect.
 */
function operationOf(endpoint: Endpoint, responses: Record<string, unknown>, dialect: (schema: unknown) => unknown): Record<string, unknown> {
  return {
    operationId: endpoint.id,
    summary: endpoint.title,
    description: endpoint.description,
    tags: [endpoint.tag],
    security: securityOf(endpoint),
    parameters: [...parametersOf('path', endpoint.params), ...parametersOf('query', endpoint.query)].map((p) => ({ ...p, schema: dialect(p.schema) })),
    responses,
    // A body with no required field may be left out (the service reads no body as {}).
    ...(endpoint.body ? { requestBody: { required: bodyRequired(endpoint.body), content: { 'application/json': { schema: dialect(requestSchema(endpoint.body)) } } } } : {}),
  };
}

/** The OpenAPI 3.1.0 document of the versioned API, derived from the endpoint registry. */
export function buildOpenApi(endpoints: readonly Endpoint[], baseUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  const responses: Record<string, unknown> = {};
  for (const endpoint of endpoints) {
    const operationResponses: Record<string, unknown> = {};
    operationResponses[String(endpoint.status)] = {
      description: endpoint.schemaId ? `\`${endpoint.schemaId}\`` : 'Success',
      content: successContent(endpoint, endpoint.contentType === 'application/json' ? plainSchema(endpoint.responseSchema) : { type: 'string' }),
    };
    addErrorResponses(endpoint, operationResponses, responses);
    (paths[endpoint.path] ??= {})[endpoint.method.toLowerCase()] = {
      ...operationOf(endpoint, operationResponses, (schema) => schema),
      'x-scope': endpoint.scope,
      'x-kind': endpoint.kind,
    };
  }
  // An operation that answers what another does with a query (the federated overview is
  // `GET {v1}/empire/overview?federated=1`): both operations say so, each at its own path.
  for (const endpoint of endpoints) {
    const same = endpoint.sameAnswerAs;
    if (same === null) continue;
    const query = new URLSearchParams(same.query).toString();
    const operation = paths[endpoint.path]?.[endpoint.method.toLowerCase()] as Record<string, unknown> | undefined;
    if (operation) operation['x-same-answer-as'] = { method: same.method, path: same.path, query: same.query };
    const target = paths[same.path]?.[same.method.toLowerCase()] as Record<string, unknown> | undefined;
    if (target) {
      const listed = (target['x-also-answers'] as unknown[] | undefined) ?? [];
      target['x-also-answers'] = [...listed, { query: same.query, operationId: endpoint.id, path: endpoint.path, description: `With ?${query} this operation answers what ${endpoint.id} answers.` }];
    }
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
        bridgeToken: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Observatory-Bridge',
          description: 'OBSERVATORY_BRIDGE_TOKEN, the secret deployments share (spec D7); a credential only on the operations that list it, holding only their scope.',
        },
        ...AGENT_SECURITY_SCHEMES,
        tenantSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Observatory-Signature',
          description: '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under the tenant signing secret>`, with `X-Observatory-Tenant: <slug>`.',
        },
        signedUrlExpires: {
          type: 'apiKey',
          in: 'query',
          name: 'expires',
          description: 'A signed link\'s expiry in Unix seconds; the link is refused (401 `expired-url`) after it. Links are made by the service (evidence bundles), never by clients.',
        },
        signedUrlSignature: {
          type: 'apiKey',
          in: 'query',
          name: 'signature',
          description: 'A signed link\'s signature: hex HMAC-SHA256 of `<path>\\n<expires>` under a key of the deployment; any change to the path, `expires` or `signature` is refused (401 `bad-signature`).',
        },
      },
    },
  };
}

const AGENT_SECURITY_SCHEMES = {
  agentApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An agent API key (`agk_…`); raises the rate limit.' },
  agentBearer: { type: 'http', scheme: 'bearer', description: 'The same agent API key as `Authorization: Bearer agk_…`.' },
};

const RATE_HEADERS = {
  'X-RateLimit-Limit': { description: 'Calls allowed in the current one-minute window.', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Calls left in the current window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
};

/**
 * A JSON Schema (TypeBox, 2020-12 style) in the OpenAPI 3.0 dialect: `const` becomes a one-value
 * `enum`, a union with null becomes `nullable`, a union of constants an `enum`, `patternProperties`
 * (records) `additionalProperties`, and keywords 3.0 lacks are dropped.
 */
export function toOpenApi30Schema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOpenApi30Schema);
  if (schema === null || typeof schema !== 'object') return schema;
  const input = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (key === '$id' || key === '$schema' || key === 'examples') continue;
    if (key === 'const') out.enum = [value];
    else if (key === 'patternProperties') {
      const [inner] = Object.values(value as Record<string, unknown>);
      out.additionalProperties = toOpenApi30Schema(inner);
    } else if (key === 'properties') {
      out.properties = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, inner]) => [name, toOpenApi30Schema(inner)]));
    } else out[key] = toOpenApi30Schema(value);
  }
  if (Array.isArray(out.type)) {
    const types = (out.type as string[]).filter((t) => t !== 'null');
    if (types.length < (out.type as string[]).length) out.nullable = true;
    out.type = types[0];
  }
  for (const union of ['anyOf', 'oneOf'] as const) {
    const members = out[union] as Record<string, unknown>[] | undefined;
    if (!members) continue;
    const nonNull = members.filter((m) => !(m.type === 'null' || (Array.isArray(m.enum) && m.enum.length === 1 && m.enum[0] === null)));
    if (nonNull.length < members.length) {
      delete out[union];
      if (nonNull.length === 1) Object.assign(out, nonNull[0], { nullable: true });
      else Object.assign(out, { [union]: nonNull, nullable: true });
    }
    const current = out[union] as Record<string, unknown>[] | undefined;
    if (current && current.every((m) => Array.isArray(m.enum) && m.enum.length === 1 && typeof m.type === 'string' && m.type === current[0]!.type)) {
      delete out[union];
      Object.assign(out, { type: current[0]!.type, enum: current.map((m) => (m.enum as unknown[])[0]) });
    }
  }
  return out;
}

/**
 * The OpenAPI 3.0.3 document of the public agent API (spec C, Versioning item 4), derived from
 * the same registry entries as the 3.1 document: the group's endpoints only, anonymous or with an
 * agent API key, each answer with its rate-limit headers.
 */
export function buildOpenApi30(endpoints: readonly Endpoint[], options: { title: string; version: string; description: string; baseUrl: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  const responses: Record<string, unknown> = {};
  for (const endpoint of endpoints) {
    const json = endpoint.contentType === 'application/json';
    const operationResponses: Record<string, unknown> = {
      [String(endpoint.status)]: {
        description: endpoint.schemaId ? `\`${endpoint.schemaId}\`` : 'Success',
        headers: RATE_HEADERS,
        content: { [endpoint.contentType.split(';')[0]!.trim()]: { schema: json ? toOpenApi30Schema(plainSchema(endpoint.responseSchema)) : { type: 'string' }, example: endpoint.example } },
      },
    };
    addErrorResponses(endpoint, operationResponses, responses, {
      describe: (status) => (status === 401 ? ['Unauthorized', 'The API key is unknown or revoked.'] : undefined),
      headers: (status) => (status === 429 ? { ...RATE_HEADERS, 'Retry-After': { description: 'Seconds to wait before calling again.', schema: { type: 'integer' } } } : RATE_HEADERS),
    });
    (paths[endpoint.path] ??= {})[endpoint.method.toLowerCase()] = operationOf(endpoint, operationResponses, toOpenApi30Schema);
  }
  return {
    openapi: '3.0.3',
    info: { title: options.title, version: options.version, description: options.description },
    servers: [{ url: options.baseUrl }],
    tags: [...new Set(endpoints.map((e) => e.tag))].sort().map((name) => ({ name })),
    paths,
    components: {
      schemas: { 'svc-error.v1': toOpenApi30Schema(plainSchema(ErrorEnvelope)) },
      responses,
      securitySchemes: AGENT_SECURITY_SCHEMES,
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
      paramsSchema: requestSchema(e.params),
      querySchema: requestSchema(e.query),
      bodySchema: requestSchema(e.body),
      responseSchema: e.contentType === 'application/json' ? plainSchema(e.responseSchema) : null,
      example: e.example,
      ...(e.sameAnswerAs !== null ? { sameAnswerAs: e.sameAnswerAs } : {}),
    })),
  };
}
