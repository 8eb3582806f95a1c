import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import { badRequest } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import { authenticate, type CredentialResolver } from './auth.ts';
import { renderError } from './errors.ts';
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
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: false } },
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('rawBody', undefined);
  app.decorateRequest('errorReason', undefined);
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
 * Fastify's form of config.trustProxy. A hop count trusts the `hops` addresses nearest the
 * server (the socket peer is hop 0), so the client is the address the outermost trusted proxy
 * saw; whatever a client wrote further left in `X-Forwarded-For` is never taken.
 */
export function proxyTrust(trust: false | number | string[]): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (trust === false || trust === 0) return false;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return trust;
}

/** The first string (or object key) in a parsed JSON value that holds U+0000, as `body.a[2].b`; null when none does. */
export function fieldWithNul(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = fieldWithNul(value[i], `${path}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key.includes('\u0000')) return `${path}.${key.replaceAll('\u0000', '\\u0000')}`;
      const found = fieldWithNul(inner, `${path}.${key}`);
      if (found !== null) return found;
    }
  }
  return null;
}
