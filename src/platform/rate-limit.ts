import { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { type IRateLimiterOptions, RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

/**
 * Fixed-window rate limits per key, with rate-limiter-flexible: in this process's memory, or in
 * Redis when a URL is given so that every instance counts against one limit. If Redis cannot be
 * reached, each instance falls back to its own in-memory counters (the library's insurance
 * limiter) rather than refusing or failing calls; it goes back to Redis once Redis answers again.
 *
 * The in-memory counters are bounded (MEMORY_KEYS_MAX per tier): the library's own memory store
 * keeps a Map entry and a timer per key with no cap, so a caller inventing keys (agent names, IPv6
 * addresses, bogus API keys) could grow the process without limit. Here, past the bound, the
 * least recently used counters are forgotten; a key in active use is never the least recent.
 */

/** Counters kept in memory per tier; past it the least recently used are forgotten. */
export const MEMORY_KEYS_MAX = 100_000;

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
  /** Gives back points taken by `consume` (a call refused by another limit, a lookup that found a good key). */
  refund(tier: string, key: string, points?: number): Promise<void>;
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
  /** Counters kept in memory per tier (default MEMORY_KEYS_MAX); tests make it small. */
  memoryKeysMax?: number;
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
    const memory = new BoundedRateLimiterMemory({ ...base, maxKeys: options.memoryKeysMax ?? MEMORY_KEYS_MAX });
    const limiter = redis === null ? memory : new RateLimiterRedis({ ...base, storeClient: redis, insuranceLimiter: memory, rejectIfRedisNotReady: true });
    limiters.set(tier.name, { limiter, points: tier.points });
  }
  const tierOf = (name: string) => {
    const tier = limiters.get(name);
    if (!tier) throw new Error(`unknown rate tier ${name}`);
    return tier;
  };

  return {
    store: redis === null ? 'memory' : 'redis',
    async consume(tierName, key, points = 1) {
      const tier = tierOf(tierName);
      try {
        const res = await tier.limiter.consume(key, points);
        return decision(true, tier.points, res);
      } catch (rejected) {
        if (rejected instanceof RateLimiterRes) return decision(false, tier.points, rejected);
        throw rejected;
      }
    },
    async refund(tierName, key, points = 1) {
      await tierOf(tierName).limiter.reward(key, points);
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

/** One counter: its points and when its window ends (epoch ms; null for a counter without expiry). */
interface Counter {
  value: number;
  expiresAt: number | null;
}

/**
 * The storage RateLimiterMemory expects (lib/component/MemoryStorage: incrby, set, get, delete,
 * _restoreRecord, and `_storage` iterated by dump()), on an LRU cache of at most `maxKeys`
 * counters. A window's end is a timestamp checked on read instead of a timer per key, so an
 * expired counter costs nothing until it is read again or pushed out by newer ones.
 */
export class BoundedMemoryStorage {
  /** Iterated as [key, {value, expiresAt}] by RateLimiterMemory.dump(). */
  readonly _storage: LRUCache<string, Counter>;

  constructor(maxKeys: number) {
    this._storage = new LRUCache<string, Counter>({ max: maxKeys });
  }

  get size(): number {
    return this._storage.size;
  }

  incrby(key: string, value: number, durationSec: number): RateLimiterRes {
    const counter = this.live(key);
    if (counter === undefined) return this.set(key, value, durationSec);
    counter.value += toPoints(value);
    return new RateLimiterRes(0, counter.expiresAt === null ? -1 : counter.expiresAt - Date.now(), counter.value, false);
  }

  set(key: string, value: number, durationSec: number): RateLimiterRes {
    const durationMs = durationSec * 1000;
    const counter: Counter = { value: toPoints(value), expiresAt: durationMs > 0 ? Date.now() + durationMs : null };
    this._storage.set(key, counter);
    return new RateLimiterRes(0, durationMs === 0 ? -1 : durationMs, counter.value, true);
  }

  get(key: string): RateLimiterRes | null {
    const counter = this.live(key);
    if (counter === undefined) return null;
    return new RateLimiterRes(0, counter.expiresAt === null ? -1 : counter.expiresAt - Date.now(), counter.value, false);
  }

  delete(key: string): boolean {
    return this._storage.delete(key);
  }

  _restoreRecord(key: string, value: number, expiresAt: number | null): void {
    if (expiresAt !== null && (!Number.isFinite(expiresAt) || expiresAt <= Date.now())) return;
    this._storage.set(key, { value: toPoints(value), expiresAt });
  }

  /** The key's counter while its window lasts; an ended window is dropped. */
  private live(key: string): Counter | undefined {
    const counter = this._storage.get(key);
    if (counter === undefined) return undefined;
    if (counter.expiresAt !== null && counter.expiresAt <= Date.now()) {
      this._storage.delete(key);
      return undefined;
    }
    return counter;
  }
}

/** As the library's Record does: points are whole numbers. */
function toPoints(value: number): number {
  return Number.parseInt(String(value), 10);
}

/**
 * RateLimiterMemory with a bounded store (see BoundedMemoryStorage); the limiter's logic (block
 * duration, execEvenly, dump and restore) is the library's. Usable on its own or as the insurance
 * limiter of RateLimiterRedis.
 */
export class BoundedRateLimiterMemory extends RateLimiterMemory {
  private readonly bounded: BoundedMemoryStorage;

  constructor(options: IRateLimiterOptions & { maxKeys: number }) {
    const { maxKeys, ...rest } = options;
    super(rest);
    this.bounded = new BoundedMemoryStorage(maxKeys);
    (this as unknown as { _memoryStorage: BoundedMemoryStorage })._memoryStorage = this.bounded;
  }

  /** Counters held now, expired ones not yet dropped included. */
  get storedKeys(): number {
    return this.bounded.size;
  }
}
