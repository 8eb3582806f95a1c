import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

/**
 * Fixed-window rate limits per key, with rate-limiter-flexible: in this process's memory, or in
 * Redis when a URL is given so that every instance counts against one limit. If Redis cannot be
 * reached, each instance falls back to its own in-memory counters (the library's insurance
 * limiter) rather than refusing or failing calls; it goes back to Redis once Redis answers again.
 */

export interface RateTier {
  /** Name, part of the stored key: several tiers never share a counter. */
  name: string;
  /** Requests allowed per window. */
  points: number;
  /** Window length in seconds. */
  durationSec: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
  /** For a refused call: whole seconds to wait (at least 1). */
  retryAfterSec: number;
}

export interface RateLimiter {
  consume(tier: string, key: string, points?: number): Promise<RateDecision>;
  /** Which store counts: `memory` or `redis`. */
  readonly store: 'memory' | 'redis';
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  tiers: readonly RateTier[];
  /** redis:// URL; null keeps the counters in memory. */
  redisUrl: string | null;
  /** Prefix of every Redis key (tests isolate runs with it). */
  keyPrefix?: string;
  /** How long start-up waits for Redis before going on with the fallback. */
  connectTimeoutMs?: number;
}

export async function createRateLimiter(options: RateLimiterOptions): Promise<RateLimiter> {
  const prefix = options.keyPrefix ?? 'observatory-rl';
  let redis: Redis | null = null;
  if (options.redisUrl !== null) {
    // No offline queue: while disconnected a call fails at once and the insurance limiter answers.
    redis = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
    redis.on('error', () => {}); // reconnects by itself; calls meanwhile use the fallback
    await Promise.race([redis.connect().catch(() => {}), new Promise((resolve) => setTimeout(resolve, options.connectTimeoutMs ?? 2_000).unref())]);
  }
  const limiters = new Map<string, { limiter: RateLimiterAbstract; points: number }>();
  for (const tier of options.tiers) {
    const base = { points: tier.points, duration: tier.durationSec, keyPrefix: `${prefix}:${tier.name}` };
    const memory = new RateLimiterMemory(base);
    const limiter = redis === null ? memory : new RateLimiterRedis({ ...base, storeClient: redis, insuranceLimiter: memory, rejectIfRedisNotReady: true });
    limiters.set(tier.name, { limiter, points: tier.points });
  }

  return {
    store: redis === null ? 'memory' : 'redis',
    async consume(tierName, key, points = 1) {
      const tier = limiters.get(tierName);
      if (!tier) throw new Error(`unknown rate tier ${tierName}`);
      try {
        const res = await tier.limiter.consume(key, points);
        return decision(true, tier.points, res);
      } catch (rejected) {
        if (rejected instanceof RateLimiterRes) return decision(false, tier.points, rejected);
        throw rejected;
      }
    },
    async close() {
      if (redis !== null) redis.disconnect();
    },
  };
}

function decision(allowed: boolean, limit: number, res: RateLimiterRes): RateDecision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, res.remainingPoints),
    resetMs: res.msBeforeNext,
    retryAfterSec: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  };
}
