import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import cookie from '@fastify/cookie';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import { REQUEST_LIMIT_DEFAULTS, type RequestLimits } from '../config.ts';
import { badRequest, ServiceError } from '../errors.ts';
import type { BridgeTokens, LatencyFaults } from '../faults/index.ts';
import type { Metrics } from '../metrics.ts';
import { authenticate, type CredentialResolver } from './auth.ts';
import { consolePlugin } from './console.ts';
import type { AuthFailureLimiter } from './auth-failures.ts';
import { type ConcurrencyLimit, type ConcurrencyPool, createConcurrencyLimit, holdForRequest, overloaded, type RequestSlot } from './concurrency.ts';
import { endDeadline, startDeadline } from './deadline.ts';
import { formatBytes, formatDuration, renderError } from './errors.ts';
import { buildValidatorFactory } from './validation.ts';
import { assertRegistryConsistent, type Endpoint, ErrorEnvelope, guardedByFailureLimit, type Principal, toFastifyPath, V1 } from './registry.ts';

export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface ServerOptions {
  endpoints: readonly Endpoint[];
  credentials: CredentialResolver;
  clock: Clock;
  metrics: Metrics;
  metricsToken: string | null;
  /** OBSERVATORY_BRIDGE_TOKEN and its staged next one: the credentials of peer deployments on endpoints that opt in (registry `bridge`); absent or null refuses bridge calls. */
  bridgeTokens?: BridgeTokens | null;
  logger: FastifyBaseLogger;
  /** false, a hop count or proxy addresses/CIDRs (config.trustProxy); never `true`. */
  trustProxy: false | number | string[];
  /** The per-address limit on 401 and 403 answers; null when OBSERVATORY_AUTH_FAILURES_PER_MINUTE is 0. */
  authFailures?: AuthFailureLimiter | null;
  /** Deadlines, header size and work-slot caps (config.requestLimits); REQUEST_LIMIT_DEFAULTS where absent. */
  limits?: Partial<RequestLimits>;
  /** Latency injected on purpose (a chaos experiment, platform/faults); absent or idle, requests are not delayed. */
  latency?: LatencyFaults;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    endpointId?: string;
    /** An ingest endpoint (its refusals are counted by reason in the metrics). */
    ingest?: boolean;
    /** A route of the console's static files (http/console.ts), not an API endpoint of the registry. */
    console?: boolean;
    /** The request deadline in milliseconds (deadline.ts); API endpoints only. */
    timeoutMs?: number;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** The body exactly as received, for signatures computed over raw bytes. */
    rawBody: string | undefined;
    /** The `reason` of the error this request was answered with, if any. */
    errorReason: string | undefined;
    /**
     * Refused by the failure limit after the first refusal of its window: per-request samplers
     * (the ingest SLOs) skip it, so a flood writes one row per address per window, not one per call.
     */
    floodRefused: boolean;
  }
  interface FastifyInstance {
    /** Every route the server registered (HEAD twins excluded); the contract test compares it with the registry. */
    registeredRoutes: { method: string; url: string }[];
    /** The work-slot pools endpoints draw from (registry `concurrency`); tests read their occupancy. */
    concurrencyLimits: Record<ConcurrencyPool, ConcurrencyLimit>;
  }
}

/** Builds the Fastify server from the endpoint registry: one route per entry, nothing else. */
export function buildServer(options: ServerOptions): FastifyInstance {
  const { endpoints, credentials, clock, metrics, metricsToken } = options;
  assertRegistryConsistent(endpoints);
  const limits: RequestLimits = { ...REQUEST_LIMIT_DEFAULTS, ...options.limits };
  const pools: Record<ConcurrencyPool, ConcurrencyLimit> = {
    ingest: createConcurrencyLimit('ingest', limits.ingestConcurrency),
    'graph-query': createConcurrencyLimit('graph-query', limits.graphQueryConcurrency),
    'model-call': createConcurrencyLimit('model-call', limits.modelCallConcurrency),
  };

  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: BODY_LIMIT_BYTES,
    // Slow clients (slowloris): the whole request, headers included, must arrive within the
    // receive timeout (408); Node checks these deadlines every `connectionsCheckingInterval`.
    requestTimeout: limits.receiveTimeoutMs,
    // A socket silent for longer than any request may take, receiving or being served, is dropped
    // (a client that stops reading its answer, say).
    connectionTimeout: Math.max(limits.timeoutMs, limits.receiveTimeoutMs, ...endpoints.map((e) => e.timeoutMs ?? 0)) + 5_000,
    http: {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.receiveTimeoutMs,
      requestTimeout: limits.receiveTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(limits.receiveTimeoutMs / 4))),
    },
    clientErrorHandler: clientErrorAnswer(clock, limits),
    trustProxy: proxyTrust(options.trustProxy),
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    schemaController: { compilersFactory: { buildValidator: buildValidatorFactory() } },
    // A path value over the router's 100-character limit, or a URL whose percent-encoding does
    // not decode, is refused before any route (or the error handler) is reached: answer it in
    // svc-error.v1 like every other refusal instead of Fastify's own body.
    frameworkErrors: (error, request, reply) => {
      const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const reason = tooLong || error.code === 'FST_ERR_BAD_URL' ? 'invalid-params' : 'bad-request';
      request.errorReason = reason;
      void (reply as FastifyReply).status(400).type('application/json').send({
        schema: 'svc-error.v1',
        reason,
        human: tooLong ? 'A path value is longer than 100 characters.' : 'The request path is not a valid URL.',
        field: 'path',
        generatedAt: clock.now().toISOString(),
      });
    },
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('rawBody', undefined);
  app.decorateRequest('errorReason', undefined);
  app.decorateRequest('floodRefused', false);
  const authFailures = options.authFailures ?? null;
  const latency = options.latency ?? null;
  const registeredRoutes: { method: string; url: string }[] = [];
  app.decorate('registeredRoutes', registeredRoutes);
  app.decorate('concurrencyLimits', pools);
  const requestSlots = new WeakMap<FastifyRequest, RequestSlot>();
  /** What each request's verifyCaller resolved to, handed to its handler as `ctx.verified`. */
  const verifiedCallers = new WeakMap<FastifyRequest, unknown>();
  app.addHook('onRoute', (route) => {
    if (route.config?.console === true) return;
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') registeredRoutes.push({ method, url: route.url });
    }
  });
  void app.register(cookie);
  void app.register(consolePlugin());

  // An empty body on a JSON POST means "no fields", which is friendlier than a 400 for calls like
  // rotate-secret that take none. Anything else goes through Fastify's hardened JSON parser.
  // JSON is the only body this API takes; any other content type is refused with 400.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    request.rawBody = body as string;
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    parseJson(request, body as string, (error, value) => {
      // PostgreSQL text and jsonb cannot hold U+0000: refuse it here, naming the field, rather
      // than fail the write. Only a body with the escape in it is walked.
      const field = error || !(body as string).includes('\\u0000') ? null : fieldWithNul(value, 'body');
      if (field !== null) return done(badRequest('invalid-body', `${field} contains the NUL character (U+0000), which cannot be stored.`, { field }), undefined);
      done(error, value);
    });
  });

  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', request.id);
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    endDeadline(request);
    const endpointId = request.routeOptions.config.endpointId ?? 'unmatched';
    metrics.observeRequest(endpointId, request.method, reply.statusCode, reply.elapsedTime / 1000);
    if (request.routeOptions.config.ingest === true && reply.statusCode >= 300) {
      metrics.observeIngestRefusal(endpointId, request.errorReason ?? `http-${reply.statusCode}`);
    }
    if (authFailures !== null && (reply.statusCode === 401 || reply.statusCode === 403)) {
      await authFailures.recordFailure(request.ip, clock.now().getTime()).catch((error: unknown) => {
        request.log.warn({ err: error }, 'could not count an authentication failure');
      });
    }
  });

  app.setErrorHandler((error, request, reply) => {
    const route = request.routeOptions;
    const rendered = renderError(error, request.id, {
      ...(typeof route.bodyLimit === 'number' ? { bodyLimit: route.bodyLimit } : {}),
      ...(route.config.timeoutMs !== undefined ? { timeoutMs: route.config.timeoutMs } : {}),
    });
    request.errorReason = rendered.body.reason;
    if (rendered.unexpected) {
      request.log.error({ err: error, requestId: request.id }, 'unexpected error while serving request');
    }
    if ((rendered.status === 429 || rendered.status === 503) && typeof rendered.body.retryAfterSec === 'number') {
      reply.header('retry-after', String(rendered.body.retryAfterSec));
    }
    void reply.status(rendered.status).type('application/json').send({ ...rendered.body, generatedAt: clock.now().toISOString() });
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({
      schema: 'svc-error.v1',
      reason: 'not-found',
      human: `There is no endpoint ${request.method} ${request.url.split('?')[0]}.`,
      generatedAt: clock.now().toISOString(),
    });
  });

  for (const endpoint of endpoints) {
    const pool = endpoint.concurrency === null ? null : pools[endpoint.concurrency];
    const responses: Record<number, unknown> = {};
    if (endpoint.contentType === 'application/json') responses[endpoint.status] = endpoint.responseSchema;
    // A refusal status carries either form (svc-error.v1 or the endpoint's `ok: false` envelope): plain JSON.stringify.
    for (const status of endpoint.errorStatuses) if (status !== endpoint.refusedStatus) responses[status] = ErrorEnvelope;
    // The deadline from the route's first hook to its answer (503 `timeout`); an endpoint may declare a longer one.
    const timeoutMs = endpoint.timeoutMs !== null ? Math.max(endpoint.timeoutMs, limits.timeoutMs) : limits.timeoutMs;
    app.route({
      method: endpoint.method,
      url: toFastifyPath(endpoint.path),
      config: { endpointId: endpoint.id, ingest: endpoint.concurrency === 'ingest', timeoutMs },
      ...(endpoint.bodyLimit !== null ? { bodyLimit: endpoint.bodyLimit } : {}),
      schema: {
        ...(endpoint.params ? { params: endpoint.params } : {}),
        ...(querySchemaOf(endpoint) ? { querystring: querySchemaOf(endpoint) } : {}),
        ...(endpoint.body ? { body: endpoint.body } : {}),
        response: responses,
      },
      preValidation: async (request: FastifyRequest, reply) => {
        // As for bodies: PostgreSQL text cannot hold U+0000, so a path or query value with it is
        // refused naming the field instead of failing the read. Only a URL with `%00` is walked.
        if (request.url.includes('%00')) {
          const inParams = fieldWithNul(request.params, 'path');
          const field = inParams ?? fieldWithNul(request.query, 'query');
          if (field !== null) throw badRequest(inParams ? 'invalid-params' : 'invalid-query', `${field} contains the NUL character (U+0000), which cannot be stored or searched.`, { field });
        }
        if (endpoint.verifyCaller) verifiedCallers.set(request, await endpoint.verifyCaller(request, reply));
        // The caller is authenticated (bearer or session in onRequest, signature just above): only
        // now may it take a work slot, so an unauthenticated flood cannot crowd out real callers.
        if (pool !== null) {
          const slot = pool.tryAcquire();
          if (slot === null) throw overloaded(pool);
          const held = holdForRequest(slot);
          requestSlots.set(request, held);
          // 'close' comes when the answer is sent and when the client goes away first.
          reply.raw.once('close', () => held.responseClosed());
        }
        // A POST without a body means "no fields": the schema then says which are required.
        if (endpoint.body && (request.body === undefined || request.body === null)) request.body = {};
      },
      ...(endpoint.onResponse ? { onResponse: endpoint.onResponse } : {}),
      // Authentication runs before the body is read, so a caller without a credential learns
      // nothing about what the body should look like.
      onRequest: async (request, reply) => {
        startDeadline(request, reply, timeoutMs);
        // An injected latency comes first, so every answer of a targeted route is late, a 401 or a
        // 429 as much as a 200. With nothing injected, delayFor answers 0 without matching.
        if (latency !== null) {
          const delayMs = latency.delayFor({ endpointId: endpoint.id, url: request.url });
          if (delayMs > 0) await sleep(delayMs);
        }
        if (authFailures !== null && guardedByFailureLimit(endpoint)) {
          const block = authFailures.blocked(request.ip, clock.now().getTime());
          if (block !== null) {
            request.floodRefused = !block.first;
            throw new ServiceError(
              429,
              'rate-limited',
              `Too many failed authentications from this address; try again in ${block.retryAfterSec} s.`,
              { retryAfterSec: block.retryAfterSec },
            );
          }
        }
        request.principal = await authenticate(endpoint, request, credentials, metricsToken, options.bridgeTokens ?? null);
      },
      handler: async (request, reply) => {
        const slot = pool === null ? null : slotForWork(pool, requestSlots.get(request));
        let result: unknown;
        try {
          result = await endpoint.handler({
            params: request.params,
            query: request.query,
            body: request.body,
            verified: verifiedCallers.get(request),
            principal: request.principal,
            requestId: request.id,
            request,
            reply,
          });
        } catch (error) {
          if (!reply.sent) throw error;
          request.log.warn({ err: error, requestId: request.id }, 'request failed after its deadline had answered it');
          return undefined;
        } finally {
          slot?.endWork();
        }
        // Answered already by the deadline (503 `timeout`): the late result has nowhere to go.
        if (reply.sent) return undefined;
        const refused = endpoint.refusedStatus !== null && (result as { ok?: unknown } | null)?.ok === false;
        void reply.status(refused ? endpoint.refusedStatus! : endpoint.status);
        if (endpoint.schemaId !== null) {
          return { schema: endpoint.schemaId, generatedAt: clock.now().toISOString(), ...(result as object) };
        }
        // A raw endpoint answering in several media types (registry `alsoServedAs`) sets its own.
        if (!reply.hasHeader('content-type')) void reply.type(endpoint.contentType);
        return result;
      },
    });
  }
  return app;
}

/**
 * The slot the handler works under: the one taken in preValidation, or, when that one was given
 * back because the client went away before the handler started, a fresh one (the work still runs,
 * so it still counts against the cap).
 */
function slotForWork(pool: ConcurrencyLimit, held: RequestSlot | undefined): RequestSlot {
  if (held?.startWork()) return held;
  const fresh = pool.tryAcquire();
  if (fresh === null) throw overloaded(pool);
  const slot = holdForRequest(fresh);
  slot.startWork();
  return slot;
}

/**
 * Answers what Node's HTTP parser refuses before Fastify sees a request (headers over
 * `maxHeaderBytes`, a request not received within the receive timeout, a malformed request) in
 * svc-error.v1 like every other refusal, then closes the connection: after a parse error the
 * byte stream cannot be trusted to hold another request.
 */
function clientErrorAnswer(clock: Clock, limits: RequestLimits) {
  return function answer(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
    // A reset connection has nobody to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const refusal = clientErrorRefusal(error.code, limits);
    this.log.debug({ err: error, reason: refusal.reason }, 'refused a request the HTTP parser could not take');
    // Like Node's own handler: never write into a response already under way on this socket.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && inFlight?.headersSent !== true) {
      const body = JSON.stringify({ schema: 'svc-error.v1', ...refusal, generatedAt: clock.now().toISOString() });
      socket.write(
        `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}

/** The answer to an HTTP parser error, by Node's error code. */
export function clientErrorRefusal(code: string | undefined, limits: Pick<RequestLimits, 'maxHeaderBytes' | 'receiveTimeoutMs'>): { status: number; reason: string; human: string } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, reason: 'headers-too-large', human: `The request line and headers are larger than ${formatBytes(limits.maxHeaderBytes)}.` };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, reason: 'request-timeout', human: `The request was not received in full within ${formatDuration(limits.receiveTimeoutMs)}.` };
  }
  return { status: 400, reason: 'bad-request', human: 'The request is not well-formed HTTP.' };
}

/**
 * The query schema the route validates. On the operator API ({v1}) the declared parameters are
 * the only ones: an unknown key (`?limt=5`) is a 400 `invalid-query` naming it rather than a
 * silent fall-back to the default, as the OpenAPI document says. Public pages and the agent API
 * keep taking keys they do not know, because crawlers append their own (`utm_*`, cache busters).
 */
const NO_QUERY = { type: 'object', properties: {}, additionalProperties: false } as const;
function querySchemaOf(endpoint: Endpoint): object | null {
  if (!endpoint.path.startsWith(`${V1}/`)) return endpoint.query;
  return endpoint.query ? { ...endpoint.query, additionalProperties: false } : NO_QUERY;
}

/**
 * Fastify's form of config.trustProxy. A hop count trusts the `hops` addresses nearest the
 * server (the socket peer is hop 0), so the client is the address the outermost trusted proxy
 * saw; whatever a client wrote further left in `X-Forwarded-For` is never taken.
 */
export function proxyTrust(trust: false | number | string[]): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (trust === false || trust === 0) return false;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return trust;
}

/**
 * The first string (or object key) in a parsed JSON value that holds U+0000, as `body.a[2].b`;
 * null when none does. Walked with an explicit stack, not recursion: a body nested thousands of
 * levels deep must get its 400, not overflow the call stack.
 */
export function fieldWithNul(value: unknown, path: string): string | null {
  // Each visited node keeps its parent and its own path segment; the path is spelled only for the
  // node found, so a deep document costs no quadratic string building.
  const parents: number[] = [-1];
  const segments: string[] = [path];
  const spell = (node: number, last = ''): string => {
    let out = last;
    for (let n = node; n !== -1; n = parents[n]!) out = segments[n]! + out;
    return out;
  };
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [current, node] = pending.pop()!;
    const child = (inner: unknown, segment: string) => {
      parents.push(node);
      segments.push(segment);
      pending.push([inner, parents.length - 1]);
    };
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return spell(node);
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) child(current[i], `[${i}]`);
    } else if (current !== null && typeof current === 'object') {
      const entries = Object.entries(current);
      for (const [key] of entries) if (key.includes('\u0000')) return spell(node, `.${key.replaceAll('\u0000', '\\u0000')}`);
      for (let i = entries.length - 1; i >= 0; i--) child(entries[i]![1], `.${entries[i]![0]}`);
    }
  }
  return null;
}
