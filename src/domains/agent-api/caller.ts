import type { FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../../platform/errors.ts';
import { bearerToken } from '../../platform/http/auth.ts';
import type { RateLimiter } from '../../platform/rate-limit.ts';
import { BATCH_QUERIES_MAX, type ResolvedKey } from './service.ts';

/**
 * Who is calling the public agent API and whether they may (docs/agent-api.md, "Rate limits"):
 * an API key (`Authorization: Bearer` or `X-API-Key`) is checked, then one point per call (one
 * per query of a batch) is taken from the caller's window, and every answer carries the window's
 * `X-RateLimit-*` headers. Runs before validation, so malformed calls count too.
 */

export const ANONYMOUS_TIER = 'agent-anonymous';
export const KEY_TIER = 'agent-key';
/** Longest agent_name that is part of a rate-limit key; longer names are cut. */
const AGENT_NAME_KEY_MAX = 128;

/** The key a caller presented: `X-API-Key`, else `Authorization: Bearer`; null when none. */
export function presentedKey(request: FastifyRequest): string | null {
  const header = request.headers['x-api-key'];
  const direct = Array.isArray(header) ? header[0] : header;
  if (direct !== undefined && direct.trim() !== '') return direct.trim();
  return bearerToken(request);
}

/** A JSON body's fields, or null when the call has no object body. */
export function bodyFields(request: FastifyRequest): Record<string, unknown> | null {
  return request.body !== null && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : null;
}

/** A string field of the call as sent (not yet validated): from the JSON body, else the query string. */
export function callField(request: FastifyRequest, name: string): string | null {
  const fromBody = bodyFields(request)?.[name];
  if (typeof fromBody === 'string') return fromBody;
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.[name];
  return typeof fromQuery === 'string' ? fromQuery : null;
}

/** Points a call costs: one, or one per query of a batch (capped at the batch maximum). */
export function pointsOf(request: FastifyRequest): number {
  const queries = bodyFields(request)?.queries;
  return Array.isArray(queries) ? Math.min(Math.max(queries.length, 1), BATCH_QUERIES_MAX) : 1;
}

export function createCallerCheck(deps: { limiter: RateLimiter; resolveKey: (plaintext: string) => Promise<ResolvedKey | null> }) {
  return async function checkCaller(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const plaintext = presentedKey(request);
    let key: ResolvedKey | null = null;
    if (plaintext !== null) {
      key = await deps.resolveKey(plaintext);
      if (key === null) throw new ServiceError(401, 'invalid-api-key', 'The API key is unknown or revoked. Call without a key for the anonymous limit, or ask for a new key.');
    }
    // JSON-encoded, so no IP or agent_name can run into the other part of the key.
    const decision = key
      ? await deps.limiter.consume(KEY_TIER, key.id, pointsOf(request))
      : await deps.limiter.consume(ANONYMOUS_TIER, JSON.stringify([request.ip, (callField(request, 'agent_name') ?? '').slice(0, AGENT_NAME_KEY_MAX)]), pointsOf(request));
    void reply.header('x-ratelimit-limit', String(decision.limit));
    void reply.header('x-ratelimit-remaining', String(decision.remaining));
    void reply.header('x-ratelimit-reset', String(Math.ceil(decision.resetMs / 1000)));
    if (!decision.allowed) {
      throw new ServiceError(
        429,
        'rate-limited',
        `Rate limit of ${decision.limit} requests per minute reached${key ? ' for this API key' : ' for this IP and agent_name; an API key raises it'}. Retry after ${decision.retryAfterSec} s.`,
        { retryAfterSec: decision.retryAfterSec },
      );
    }
  };
}
