import { type Static, type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ConcurrencyPool } from './concurrency.ts';

/**
 * The endpoint registry: every endpoint is declared here once. Routes, request validation, the
 * manifest and both OpenAPI documents are derived from these declarations; nothing describes an
 * endpoint twice.
 */

export const V1 = '/api/observatory/v1';

/**
 * The deadline (EndpointDefinition.timeoutMs) of endpoints whose work is long by nature: a walk of
 * the whole audit chain, a snapshot or restore, a job run on demand. Ten minutes.
 */
export const LONG_WORK_TIMEOUT_MS = 600_000;

// The scopes live in a module of their own, which the operator commands load without TypeBox.
import type { Scope } from './scopes.ts';
export { isScope, type Scope, SCOPES } from './scopes.ts';

/**
 * How a caller proves who it is:
 * - `session-or-bearer`: an operator session cookie or `Authorization: Bearer svctok_…`;
 * - `none`: public (health, passkey login);
 * - `metrics`: the metrics scrape token or a bearer token with `read:dashboard`;
 * - `tenant-signature`: an HMAC over the raw body, checked by the endpoint's `verifyCaller`;
 * - `agent-key`: the public agent API: anonymous, or an agent API key (`Authorization: Bearer` or
 *   `X-API-Key`) that raises the rate limit; checked, with the rate limit, by `verifyCaller`.
 * - `signed-url`: the link is the credential: `expires` and `signature` in the query, an HMAC over
 *   the path and the expiry (platform/http/signed-url.ts), checked by `verifyCaller`. Whoever holds
 *   the link may use it until it expires; a bearer token or session on the request is ignored.
 */
export type AuthMode = 'session-or-bearer' | 'none' | 'metrics' | 'tenant-signature' | 'agent-key' | 'signed-url';

/** The modes whose caller the server does not check itself: the endpoint's `verifyCaller` does. */
export const CHECKED_BY_ENDPOINT: ReadonlySet<AuthMode> = new Set(['tenant-signature', 'agent-key', 'signed-url']);

/** Who is calling. Every session and token belongs to a user. */
export interface Principal {
  userId: string;
  username: string;
  scopes: ReadonlySet<Scope>;
  /** The toolsets a bound token may write events for; null when the credential is not bound to toolsets. */
  toolsets: ReadonlySet<string> | null;
  via: 'bearer' | 'session' | 'metrics-token' | 'bridge';
  tokenId: string | null;
  sessionId: string | null;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Statuses every endpoint may answer besides its own list. */
const ALWAYS = [404, 500, 503];

export interface HandlerContext<P, Q, B, V = unknown> {
  params: P;
  query: Q;
  body: B;
  /**
   * What the endpoint's `verifyCaller` found (the tenant whose signature verified, the resolved
   * API key); undefined on an endpoint without one.
   */
  verified: V;
  principal: Principal | null;
  requestId: string;
  request: FastifyRequest;
  reply: FastifyReply;
}

/** A JSON response wrapped in the `{schema, generatedAt, …}` envelope. */
export interface EnvelopeResponse<R extends TProperties> {
  schemaId: string;
  fields: R;
}

/** A response sent as it is: the OpenAPI document, Prometheus text, a feed. */
export interface RawResponse {
  raw: TSchema;
  contentType?: string;
}

/** What both the declared and the erased form of an endpoint say about it. */
interface EndpointIdentity {
  id: string;
  title: string;
  description: string;
  method: HttpMethod;
  /** Full path with OpenAPI-style placeholders: `/api/observatory/v1/tokens/{id}/revoke`. */
  path: string;
  auth: AuthMode;
  /** The scope a caller must hold; `null` means any authenticated caller (or none for `auth: none`). */
  scope: Scope | null;
  tag: string;
  kind: 'read' | 'write';
}

export interface EndpointDefinition<
  P extends TSchema,
  Q extends TSchema,
  B extends TSchema,
  R extends TProperties,
  Raw extends boolean,
  V = unknown,
> extends EndpointIdentity {
  uiPath?: string | null;
  params?: P;
  query?: Q;
  body?: B;
  response: Raw extends true ? RawResponse : EnvelopeResponse<R>;
  /** An example response body (envelope included), checked against the response schema by tests. */
  example: unknown;
  /** Error statuses this endpoint may answer beyond 401/403 (from auth), 400 (from input) and 404/500/503. */
  errors?: number[];
  /** Success status; 200 unless stated. */
  status?: number;
  /**
   * The status of an answer whose `ok` is false: the endpoint's own envelope with `reason` and
   * `human` (spec C, Errors item 3: provenance and chaos validation failures answer 400 so).
   */
  refusedStatus?: number;
  /**
   * For `tenant-signature`, `agent-key` and `signed-url`: checks the caller once the raw body is read
   * and before it is validated, so an unsigned (or rate-limited) request is refused whatever its body.
   * What it resolves to reaches the handler as `ctx.verified`.
   */
  verifyCaller?: (request: FastifyRequest, reply: FastifyReply) => Promise<V>;
  /** Runs after the response is sent, whatever its status (e.g. to sample ingest outcomes). */
  onResponse?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /**
   * Opts in to the bridge credential (spec D7): a peer deployment's `X-Observatory-Bridge` header
   * carrying OBSERVATORY_BRIDGE_TOKEN is accepted here, as the operator `bridge` holding only this
   * endpoint's scope. On every other endpoint the header is no credential at all (auth.ts).
   */
  bridge?: boolean;
  /**
   * Another operation that gives the same answer: `GET {v1}/empire/overview/federated` is
   * `GET {v1}/empire/overview?federated=1`. The OpenAPI document says so on both operations
   * (`x-same-answer-as` here, `x-also-answers` there); each keeps its own path.
   */
  sameAnswerAs?: { method: HttpMethod; path: string; query: Record<string, string> };
  /**
   * For a read or action that spans every toolset and cannot be narrowed to some (the audit chain,
   * the operator audit log, a fleet-wide run): what it is, completing "This token is bound to
   * toolsets; … spans every toolset." A credential bound to toolsets is refused 403 so, once its
   * scope is checked (auth.ts, docs/operations.md "Toolset binding").
   */
  spansEveryToolset?: string;
  /** The largest body this endpoint takes, in bytes (413 beyond it); the server's 1 MiB unless stated. */
  bodyLimit?: number;
  /**
   * The deadline of this endpoint's requests instead of the server's (OBSERVATORY_REQUEST_TIMEOUT_MS),
   * for work that is long by nature and bounded by its own design (a restore, a walk of the whole
   * audit chain). A deadline never shorter than the server's applies: the longer of the two.
   */
  timeoutMs?: number;
  /**
   * The pool of work slots the endpoint draws from once its caller is authenticated: a request
   * finding the pool full is answered 503 `overloaded` with `Retry-After` at once
   * (`platform/http/concurrency.ts`).
   */
  concurrency?: ConcurrencyPool;
  handler: (
    ctx: HandlerContext<Static<P>, Static<Q>, Static<B>, V>,
  ) => Promise<Raw extends true ? unknown : Static<TObject<R>>>;
}

/** The erased form the server, manifest and OpenAPI builders walk. */
export interface Endpoint extends EndpointIdentity {
  uiPath: string | null;
  params: TSchema | null;
  query: TSchema | null;
  body: TSchema | null;
  schemaId: string | null;
  responseSchema: TSchema;
  contentType: string;
  example: unknown;
  status: number;
  refusedStatus: number | null;
  errorStatuses: number[];
  verifyCaller: ((request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) | null;
  onResponse: ((request: FastifyRequest, reply: FastifyReply) => Promise<void>) | null;
  /** Accepts the bridge credential (EndpointDefinition.bridge). */
  bridge: boolean;
  /** EndpointDefinition.sameAnswerAs; null when none. */
  sameAnswerAs: { method: HttpMethod; path: string; query: Record<string, string> } | null;
  /** Refused to a credential bound to toolsets (EndpointDefinition.spansEveryToolset); null when not. */
  spansEveryToolset: string | null;
  /** Null: the server's limit (BODY_LIMIT_BYTES). */
  bodyLimit: number | null;
  /** Null: the server's request deadline (EndpointDefinition.timeoutMs). */
  timeoutMs: number | null;
  concurrency: ConcurrencyPool | null;
  handler: (ctx: HandlerContext<unknown, unknown, unknown, unknown>) => Promise<unknown>;
}

export const ErrorEnvelope = Type.Object(
  {
    schema: Type.Literal('svc-error.v1'),
    reason: Type.String({ description: 'Stable machine-readable reason, e.g. `not-found`.' }),
    human: Type.String({ description: 'A readable sentence saying what went wrong.' }),
    field: Type.Optional(Type.String({ description: 'The request field that failed validation.' })),
    requestId: Type.Optional(Type.String({ description: 'Quote this when reporting a 500.' })),
    generatedAt: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { $id: 'svc-error.v1', additionalProperties: true },
);

export function envelopeSchema(schemaId: string, fields: TProperties): TObject {
  return Type.Object({
    schema: Type.Literal(schemaId),
    generatedAt: Type.String({ format: 'date-time' }),
    ...fields,
  });
}

/**
 * Every endpoint that checks a credential, signature or key (and the passkey login, which is one)
 * is closed to an address over its failure limit (OBSERVATORY_AUTH_FAILURES_PER_MINUTE); public
 * reads (health, readiness) stay open so probes and load balancers are never refused.
 */
export function guardedByFailureLimit(endpoint: Pick<EndpointIdentity, 'auth' | 'kind'>): boolean {
  return !(endpoint.auth === 'none' && endpoint.kind === 'read');
}

export function defineEndpoint<
  P extends TSchema = TSchema,
  Q extends TSchema = TSchema,
  B extends TSchema = TSchema,
  R extends TProperties = TProperties,
  Raw extends boolean = false,
  V = unknown,
>(definition: EndpointDefinition<P, Q, B, R, Raw, V>): Endpoint {
  const response = definition.response as EnvelopeResponse<R> | RawResponse;
  const isRaw = 'raw' in response;
  const declared = new Set<number>([...(definition.errors ?? []), ...ALWAYS]);
  if (definition.auth === 'agent-key') {
    declared.add(401);
    declared.add(429);
  } else if (definition.auth !== 'none') {
    declared.add(401);
    if (definition.scope !== null || definition.auth === 'metrics' || definition.auth === 'tenant-signature') declared.add(403);
  }
  // On {v1} an undeclared query key is refused too (server.ts), so every operator endpoint can 400.
  if (definition.body || definition.query || definition.params || definition.path.startsWith(`${V1}/`)) declared.add(400);
  // A body over the route's limit is refused before anything reads it.
  if (definition.body) declared.add(413);
  // An address over its limit of failed authentications is refused on every guarded endpoint.
  if (guardedByFailureLimit(definition)) declared.add(429);
  if (definition.refusedStatus !== undefined) declared.add(definition.refusedStatus);
  return {
    id: definition.id,
    title: definition.title,
    description: definition.description,
    method: definition.method,
    path: definition.path,
    auth: definition.auth,
    scope: definition.scope,
    tag: definition.tag,
    kind: definition.kind,
    uiPath: definition.uiPath ?? null,
    params: definition.params ?? null,
    query: definition.query ?? null,
    body: definition.body ?? null,
    schemaId: isRaw ? null : response.schemaId,
    responseSchema: isRaw ? response.raw : envelopeSchema(response.schemaId, response.fields),
    contentType: isRaw ? (response.contentType ?? 'application/json') : 'application/json',
    example: definition.example,
    status: definition.status ?? 200,
    refusedStatus: definition.refusedStatus ?? null,
    errorStatuses: [...declared].sort((a, b) => a - b),
    verifyCaller: (definition.verifyCaller as Endpoint['verifyCaller'] | undefined) ?? null,
    onResponse: definition.onResponse ?? null,
    bridge: definition.bridge ?? false,
    sameAnswerAs: definition.sameAnswerAs ?? null,
    spansEveryToolset: definition.spansEveryToolset ?? null,
    bodyLimit: definition.bodyLimit ?? null,
    timeoutMs: definition.timeoutMs ?? null,
    concurrency: definition.concurrency ?? null,
    handler: definition.handler as Endpoint['handler'],
  };
}

/** `/a/{id}/b` → `/a/:id/b` for Fastify. */
export function toFastifyPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

/**
 * Throws when two entries share an id or a (method, path), or when an endpoint whose caller is
 * authenticated by a signature, a signed link or an agent API key names no check that does it (the server does
 * not check those modes itself, so such an endpoint would be open to anyone). Run once when the
 * app is built, so a bad registry stops start-up.
 */
export function assertRegistryConsistent(endpoints: readonly Endpoint[]): void {
  const ids = new Set<string>();
  const routes = new Set<string>();
  for (const e of endpoints) {
    if (CHECKED_BY_ENDPOINT.has(e.auth) && e.verifyCaller === null) {
      throw new Error(`endpoint ${e.id} (auth ${e.auth}) names no verifyCaller: nothing would authenticate its caller`);
    }
    if (e.bridge && (e.auth !== 'session-or-bearer' || e.scope === null)) {
      throw new Error(`endpoint ${e.id} opts in to the bridge credential but is not a session-or-bearer endpoint with a scope`);
    }
    // `/metrics` takes API tokens besides its own scrape token, and an API token can be bound.
    if (e.spansEveryToolset !== null && e.auth !== 'session-or-bearer' && e.auth !== 'metrics') {
      throw new Error(`endpoint ${e.id} spans every toolset but takes no session or API token: no credential it takes can be bound`);
    }
    if (e.timeoutMs !== null && !(Number.isInteger(e.timeoutMs) && e.timeoutMs > 0)) {
      throw new Error(`endpoint ${e.id} declares timeoutMs ${e.timeoutMs}: it must be a whole number of milliseconds above 0`);
    }
    if (e.bodyLimit !== null && !(Number.isInteger(e.bodyLimit) && e.bodyLimit > 0)) {
      throw new Error(`endpoint ${e.id} declares bodyLimit ${e.bodyLimit}: it must be a whole number of bytes above 0`);
    }
    if (ids.has(e.id)) throw new Error(`endpoint id ${e.id} is declared twice`);
    ids.add(e.id);
    const key = `${e.method} ${e.path}`;
    if (routes.has(key)) throw new Error(`route ${key} is declared twice`);
    routes.add(key);
  }
}

/** Shared field shapes. */
/** The body of a POST that takes no fields: an empty body or `{}` (clients send `{}`); anything else is 400. */
export const EmptyBody = Type.Object({}, { additionalProperties: false, examples: [{}], description: 'No fields; an empty body or {}.' });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const IsoDate = Type.String({ format: 'date-time' });
/** A string from a fixed list, as a JSON Schema `enum` (validation errors then list the allowed values). */
export const StringEnum = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
/** A UTC calendar day `YYYY-MM-DD` in a query (the `from`..`to` of daily reads; platform/days.ts checks the range). */
export const DayParam = (description: string, example: string) => Type.String({ format: 'date', maxLength: 10, description, examples: [example] });
/** The cursor of a newest-first list paged by (time, id) (platform/db/paging.ts). */
export const TimeCursorParam = Type.Optional(
  Type.String({ maxLength: 100, description: 'The nextCursor of the previous page (or an ISO 8601 time: rows strictly older).' }),
);
/** A list's page size: 1 to `max`, `fallback` when absent. */
export const PageLimitParam = (fallback: number, max: number) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: max, default: fallback, description: `Rows per page, 1 to ${max}.` }));

/**
 * The request form of a union of objects discriminated by `kind`. A plain `anyOf` would make Ajv
 * report the first branch's complaint (`body.predicate.pct is required` for a bad `kind`); this
 * checks `kind` against the list first and then only the variant it names (`if`/`then`), so the
 * 400 names the real fault. It accepts exactly the documents of `Type.Union(variants)`.
 */
export function KindUnionBody<T>(variants: readonly TSchema[], description: string) {
  // JSON without TypeBox's symbol keys, for embedding in a hand-written schema.
  const plain = variants.map((v) => JSON.parse(JSON.stringify(v)) as { properties: { kind: { const: string } } });
  const kinds = plain.map((v) => v.properties.kind.const);
  return Type.Unsafe<T>({
    type: 'object',
    required: ['kind'],
    properties: { kind: { type: 'string', enum: kinds } },
    allOf: plain.map((schema) => ({ if: { type: 'object', required: ['kind'], properties: { kind: { const: schema.properties.kind.const } } }, then: schema })),
    description,
  });
}
