import { LRUCache } from 'lru-cache';
import { addressKey } from '../client-address.ts';
import { createRateLimiter, type RateLimiter } from '../rate-limit.ts';

/**
 * The per-address limit on failed authentication (docs/operations.md, "Security model"): every
 * 401 or 403 an address is answered takes a point from its window of `perMinute`; once the window
 * is spent, the address's calls to authenticated endpoints are answered 429 `rate-limited` with
 * `Retry-After` before any credential is looked up, signature checked or tenant read, until the
 * window ends. So a token-guessing or signature-forging storm costs the attacker, not the database.
 *
 * Counting goes through the shared rate limiter (Redis when configured, so every instance counts
 * together). Whether an address is blocked is asked of a local cache filled from those counts, so
 * a successful call costs no round trip: an instance that has not yet seen an address fail lets
 * through at most one more failure before it blocks it too.
 */

export const AUTH_FAILURE_TIER = 'auth-failures';
/** Blocked addresses remembered per instance; beyond it the oldest are forgotten (they get one more try). */
const BLOCKED_ADDRESSES_MAX = 100_000;

export interface AuthBlock {
  /** Whole seconds until the address may try again (at least 1). */
  retryAfterSec: number;
  /**
   * True for the first refused call of a window, false for the rest: samplers that write a row
   * per request (the ingest SLOs) write one for the first and skip the others, so a flood writes
   * one row per address per window.
   */
  first: boolean;
}

export interface AuthFailureLimiter {
  /** The block on this address, or null when it may call. */
  blocked(ip: string, nowMs: number): AuthBlock | null;
  /** Counts a 401 or 403 answered to this address. */
  recordFailure(ip: string, nowMs: number): Promise<void>;
  /** False while Redis is configured but unreachable: failures are then counted per instance, in memory. */
  redisReady(): boolean;
  close(): Promise<void>;
}

export async function createAuthFailureLimiter(options: {
  perMinute: number;
  redisUrl: string | null;
  keyPrefix?: string;
}): Promise<AuthFailureLimiter> {
  const limiter: RateLimiter = await createRateLimiter({
    redisUrl: options.redisUrl,
    ...(options.keyPrefix !== undefined ? { keyPrefix: options.keyPrefix } : {}),
    tiers: [{ name: AUTH_FAILURE_TIER, points: options.perMinute, durationSec: 60 }],
  });
  // address key → when its block ends, and whether its first refusal has been answered.
  const blocks = new LRUCache<string, { untilMs: number; refusedOnce: boolean }>({ max: BLOCKED_ADDRESSES_MAX });

  return {
    blocked(ip, nowMs) {
      const key = addressKey(ip);
      const block = blocks.get(key);
      if (block === undefined) return null;
      if (block.untilMs <= nowMs) {
        blocks.delete(key);
        return null;
      }
      const first = !block.refusedOnce;
      block.refusedOnce = true;
      return { retryAfterSec: Math.max(1, Math.ceil((block.untilMs - nowMs) / 1000)), first };
    },
    async recordFailure(ip, nowMs) {
      const key = addressKey(ip);
      const decision = await limiter.consume(AUTH_FAILURE_TIER, key);
      // The window is spent once no point remains: the next call from this address is refused.
      if (!decision.allowed || decision.remaining === 0) {
        const untilMs = nowMs + Math.max(1_000, decision.resetMs);
        const existing = blocks.get(key);
        blocks.set(key, { untilMs, refusedOnce: existing?.refusedOnce ?? false });
      }
    },
    redisReady: () => limiter.redisReady(),
    close: () => limiter.close(),
  };
}
