import type { FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../../platform/errors.ts';
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
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  return match?.[1] ?? null;
}

/** The caller's `agent_name` from the query string or the JSON body, as sent (not yet validated). */
export function agentNameOf(request: FastifyRequest): string {
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.agent_name;
  const fromBody = request.body !== null && typeof request.body === 'object' ? (request.body as Record<string, unknown>).agent_name : undefined;
  const name = typeof fromBody === 'string' ? fromBody : typeof fromQuery === 'string' ? fromQuery : '';
  return name.slice(0, AGENT_NAME_KEY_MAX);
}

/** Points a call costs: one, or one per query of a batch (capped at the batch maximum). */
export function pointsOf(request: FastifyRequest): number {
  const queries = request.body !== null && typeof request.body === 'object' ? (request.body as Record<string, unknown>).queries : undefined;
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
      : await deps.limiter.consume(ANONYMOUS_TIER, JSON.stringify([request.ip, agentNameOf(request)]), pointsOf(request));
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
