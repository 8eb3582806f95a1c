import type { FastifyReply, FastifyRequest } from 'fastify';
import { addressKey } from '../../platform/client-address.ts';
import type { Clock } from '../../platform/clock.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import { ServiceError } from '../../platform/errors.ts';
import { createClockCache } from '../../platform/memo.ts';
import { bearerToken } from '../../platform/http/auth.ts';
import type { RateDecision, RateLimiter, RateTier } from '../../platform/rate-limit.ts';
import { BATCH_QUERIES_MAX, type ResolvedKey } from './service.ts';

/**
 * Who is calling the public agent API and whether they may (docs/agent-api/README.md, "Rate limits"):
 * an API key (`Authorization: Bearer` or `X-API-Key`) is checked, then one point per call (one
 * per query of a batch) is taken from the caller's windows, and the answer carries the binding
 * window's `X-RateLimit-*` headers. Runs before validation, so malformed calls count too.
 *
 * Anonymous calls count twice: per (IP, agent_name) as spec C says, and per address across every
 * agent_name, because the caller picks agent_name and could otherwise rotate it for a fresh window
 * on every call. Presented keys that are not known to be good are looked up at most
 * UNKNOWN_KEY_LOOKUPS_PER_MINUTE times a minute per address, so guessing keys cannot turn into a
 * stream of database reads.
 */

/** The per-minute windows a caller gets (spec C, Limits; the OBSERVATORY_AGENT_API_*_PER_MINUTE settings). */
export interface Limits {
  /** Per (caller IP, agent_name). */
  anonymousPerMinute: number;
  /** Anonymous calls per caller address (IPv6: its /64), whatever the agent_name. */
  ipPerMinute: number;
  keyPerMinute: number;
}

export const ANONYMOUS_TIER = 'agent-anonymous';
/** Anonymous calls per address (IPv6: per /64) across all agent_name values. */
export const ADDRESS_TIER = 'agent-address';
export const KEY_TIER = 'agent-key';
/** Lookups of presented keys not known to be good, per address; a key found good gives its point back. */
export const UNKNOWN_KEY_TIER = 'agent-unknown-key';
export const UNKNOWN_KEY_LOOKUPS_PER_MINUTE = 10;
/** An unknown or revoked key is answered 401 from memory this long, without a lookup. */
export const UNKNOWN_KEY_CACHE_TTL_MS = 60_000;
/** A key found good is trusted this long without a lookup: the bound on how late a revocation takes effect. */
export const KNOWN_KEY_CACHE_TTL_MS = 30_000;
const KNOWN_KEYS_MAX = 10_000;
const UNKNOWN_KEYS_MAX = 20_000;
/** Longest agent_name that is part of a rate-limit key; longer names are cut. */
const AGENT_NAME_KEY_MAX = 128;

/** The windows the caller check counts in, for createRateLimiter. */
export function callerTiers(limits: Limits): RateTier[] {
  return [
    { name: ANONYMOUS_TIER, points: limits.anonymousPerMinute, durationSec: 60 },
    { name: ADDRESS_TIER, points: limits.ipPerMinute, durationSec: 60 },
    { name: KEY_TIER, points: limits.keyPerMinute, durationSec: 60 },
    { name: UNKNOWN_KEY_TIER, points: UNKNOWN_KEY_LOOKUPS_PER_MINUTE, durationSec: 60 },
  ];
}

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

/** Which window decided a call; it names the limit in a refusal. */
type Scope = 'key' | 'address' | 'address-name' | 'unknown-keys';

interface Verdict {
  decision: RateDecision;
  scope: Scope;
}

type KeyOutcome = { kind: 'key'; key: ResolvedKey } | { kind: 'unknown' } | { kind: 'throttled'; decision: RateDecision };

export interface CallerCheckDeps {
  limiter: RateLimiter;
  /** Looks the key up in the database; the check decides when that may happen. */
  resolveKey: (plaintext: string) => Promise<ResolvedKey | null>;
  /** Ages the key caches (tests move it). */
  clock: Clock;
}

export function createCallerCheck(deps: CallerCheckDeps) {
  const { limiter } = deps;
  const keys = createKeyGate(deps);

  async function anonymousVerdict(request: FastifyRequest, points: number): Promise<Verdict> {
    const address = addressKey(request.ip);
    // The address ceiling first: once it refuses, a caller rotating agent_name costs one counter
    // operation per call and creates no new (IP, agent_name) counters.
    const ceiling = await limiter.consume(ADDRESS_TIER, address, points);
    if (!ceiling.allowed) return { decision: ceiling, scope: 'address' };
    // JSON-encoded, so no IP or agent_name can run into the other part of the key.
    const ownKey = JSON.stringify([request.ip, (callField(request, 'agent_name') ?? '').slice(0, AGENT_NAME_KEY_MAX)]);
    const own = await limiter.consume(ANONYMOUS_TIER, ownKey, points);
    if (!own.allowed) {
      // Not served, so it must not eat into what the address may still spend on other names.
      await limiter.refund(ADDRESS_TIER, address, points);
      return { decision: own, scope: 'address-name' };
    }
    return bindingOf({ decision: own, scope: 'address-name' }, { decision: ceiling, scope: 'address' });
  }

  return async function checkCaller(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const plaintext = presentedKey(request);
    const points = pointsOf(request);
    let verdict: Verdict;
    if (plaintext === null) {
      verdict = await anonymousVerdict(request, points);
    } else {
      const outcome = await keys.resolve(plaintext, request.ip);
      if (outcome.kind === 'unknown') throw new ServiceError(401, 'invalid-api-key', 'The API key is unknown or revoked. Call without a key for the anonymous limit, or ask for a new key.');
      verdict = outcome.kind === 'throttled' ? { decision: outcome.decision, scope: 'unknown-keys' } : { decision: await limiter.consume(KEY_TIER, outcome.key.id, points), scope: 'key' };
    }
    const { decision } = verdict;
    void reply.header('x-ratelimit-limit', String(decision.limit));
    void reply.header('x-ratelimit-remaining', String(decision.remaining));
    void reply.header('x-ratelimit-reset', String(Math.ceil(decision.resetMs / 1000)));
    if (!decision.allowed) throw new ServiceError(429, 'rate-limited', refusal(verdict), { retryAfterSec: decision.retryAfterSec });
  };
}

/** The window a client should pace itself by: the one with fewer calls left (on a tie, the one that ends later). */
function bindingOf(a: Verdict, b: Verdict): Verdict {
  if (a.decision.remaining !== b.decision.remaining) return a.decision.remaining < b.decision.remaining ? a : b;
  return a.decision.resetMs >= b.decision.resetMs ? a : b;
}

function refusal({ decision, scope }: Verdict): string {
  const retry = `Retry after ${decision.retryAfterSec} s.`;
  switch (scope) {
    case 'unknown-keys':
      return `Too many unknown or revoked API keys from this address (${decision.limit} per minute). ${retry}`;
    case 'key':
      return `Rate limit of ${decision.limit} requests per minute reached for this API key. ${retry}`;
    case 'address':
      return `Rate limit of ${decision.limit} requests per minute reached for this IP address, whatever the agent_name; an API key raises it. ${retry}`;
    case 'address-name':
      return `Rate limit of ${decision.limit} requests per minute reached for this IP and agent_name; an API key raises it. ${retry}`;
  }
}

/**
 * Resolves presented keys with two memories in front of the database: keys found good (trusted
 * for KNOWN_KEY_CACHE_TTL_MS) and keys found unknown or revoked (refused for
 * UNKNOWN_KEY_CACHE_TTL_MS). Any other key takes a point from its address's unknown-key allowance
 * before it is looked up, and gets it back if it turns out good; with the allowance spent the
 * key is not looked up at all. Keyed by SHA-256, so no plaintext key is held.
 */
function createKeyGate(deps: CallerCheckDeps) {
  const known = createClockCache<string, ResolvedKey>({ max: KNOWN_KEYS_MAX, ttlMs: KNOWN_KEY_CACHE_TTL_MS, clock: deps.clock });
  const unknown = createClockCache<string, true>({ max: UNKNOWN_KEYS_MAX, ttlMs: UNKNOWN_KEY_CACHE_TTL_MS, clock: deps.clock });

  return {
    async resolve(plaintext: string, ip: string): Promise<KeyOutcome> {
      const hash = sha256Hex(plaintext);
      const good = known.get(hash);
      if (good !== undefined) return { kind: 'key', key: good };
      if (unknown.has(hash)) return { kind: 'unknown' };
      const address = addressKey(ip);
      const allowance = await deps.limiter.consume(UNKNOWN_KEY_TIER, address);
      if (!allowance.allowed) return { kind: 'throttled', decision: allowance };
      const key = await deps.resolveKey(plaintext);
      if (key === null) {
        unknown.set(hash, true);
        return { kind: 'unknown' };
      }
      known.set(hash, key);
      await deps.limiter.refund(UNKNOWN_KEY_TIER, address);
      return { kind: 'key', key };
    },
  };
}
