import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import { badRequest, ServiceError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import { authenticate, type CredentialResolver } from './auth.ts';
import type { AuthFailureLimiter } from './auth-failures.ts';
import { renderError } from './errors.ts';
import { buildValidatorFactory } from './validation.ts';
import { assertRegistryConsistent, type Endpoint, ErrorEnvelope, type Principal, toFastifyPath } from './registry.ts';

export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface ServerOptions {
  endpoints: readonly Endpoint[];
  credentials: CredentialResolver;
  clock: Clock;
  metrics: Metrics;
  metricsToken: string | null;
  logger: FastifyBaseLogger;
  /** false, a hop count or proxy addresses/CIDRs (config.trustProxy); never `true`. */
  trustProxy: false | number | string[];
  /** The per-address limit on 401 and 403 answers; null when OBSERVATORY_AUTH_FAILURES_PER_MINUTE is 0. */
  authFailures?: AuthFailureLimiter | null;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    endpointId?: string;
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
  }
}

/** Builds the Fastify server from the endpoint registry: one route per entry, nothing else. */
export function buildServer(options: ServerOptions): FastifyInstance {
  const { endpoints, credentials, clock, metrics, metricsToken } = options;
  assertRegistryConsistent(endpoints);

  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: BODY_LIMIT_BYTES,
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
  const registeredRoutes: { method: string; url: string }[] = [];
  app.decorate('registeredRoutes', registeredRoutes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') registeredRoutes.push({ method, url: route.url });
    }
  });
  void app.register(cookie);

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
    const endpointId = request.routeOptions.config.endpointId ?? 'unmatched';
    metrics.observeRequest(endpointId, request.method, reply.statusCode, reply.elapsedTime / 1000);
    if (authFailures !== null && (reply.statusCode === 401 || reply.statusCode === 403)) {
      await authFailures.recordFailure(request.ip, clock.now().getTime()).catch((error: unknown) => {
        request.log.warn({ err: error }, 'could not count an authentication failure');
      });
    }
  });

  app.setErrorHandler((error, request, reply) => {
    const rendered = renderError(error, request.id);
    request.errorReason = rendered.body.reason;
    if (rendered.unexpected) {
      request.log.error({ err: error, requestId: request.id }, 'unexpected error while serving request');
    }
    if (rendered.status === 429 && typeof rendered.body.retryAfterSec === 'number') {
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
    const responses: Record<number, unknown> = {};
    if (endpoint.contentType === 'application/json') responses[endpoint.status] = endpoint.responseSchema;
    // A refusal status carries either form (svc-error.v1 or the endpoint's `ok: false` envelope): plain JSON.stringify.
    for (const status of endpoint.errorStatuses) if (status !== endpoint.refusedStatus) responses[status] = ErrorEnvelope;
    app.route({
      method: endpoint.method,
      url: toFastifyPath(endpoint.path),
      config: { endpointId: endpoint.id },
      schema: {
        ...(endpoint.params ? { params: endpoint.params } : {}),
        ...(endpoint.query ? { querystring: endpoint.query } : {}),
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
        if (endpoint.verifyCaller) await endpoint.verifyCaller(request, reply);
        // A POST without a body means "no fields": the schema then says which are required.
        if (endpoint.body && (request.body === undefined || request.body === null)) request.body = {};
      },
      ...(endpoint.onResponse ? { onResponse: endpoint.onResponse } : {}),
      // Authentication runs before the body is read, so a caller without a credential learns
      // nothing about what the body should look like.
      onRequest: async (request) => {
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
        request.principal = await authenticate(endpoint, request, credentials, metricsToken);
      },
      handler: async (request, reply) => {
        const result = await endpoint.handler({
          params: request.params,
          query: request.query,
          body: request.body,
          principal: request.principal,
          requestId: request.id,
          request,
          reply,
        });
        const refused = endpoint.refusedStatus !== null && (result as { ok?: unknown } | null)?.ok === false;
        void reply.status(refused ? endpoint.refusedStatus! : endpoint.status);
        if (endpoint.schemaId !== null) {
          return { schema: endpoint.schemaId, generatedAt: clock.now().toISOString(), ...(result as object) };
        }
        void reply.type(endpoint.contentType);
        return result;
      },
    });
  }
  return app;
}

/**
 * Every endpoint that checks a credential, signature or key (and the passkey login, which is one)
 * is closed to an address over its failure limit; public reads (health, readiness) stay open so
 * probes and load balancers are never refused.
 */
function guardedByFailureLimit(endpoint: Endpoint): boolean {
  return !(endpoint.auth === 'none' && endpoint.kind === 'read');
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
