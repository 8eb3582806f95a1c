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

/** Defaults: how long a (re)connection to Redis, and one command, may take before the in-memory fallback answers. */
export const REDIS_CONNECT_TIMEOUT_MS = 2_000;
export const REDIS_COMMAND_TIMEOUT_MS = 1_000;

/**
 * A Redis client that, once a command times out, drops its connection and reconnects: a server
 * gone silent keeps the connection open, so without this every later call would wait out the
 * command timeout too. While it reconnects the client is not ready, and the limiter answers from
 * memory at once (rejectIfRedisNotReady).
 */
class FailFastRedis extends Redis {
  /** Commands already watched: ioredis may send one again after a reconnection. */
  private readonly watched = new WeakSet<object>();

  override sendCommand(...args: Parameters<Redis['sendCommand']>): ReturnType<Redis['sendCommand']> {
    const [command] = args;
    const result = super.sendCommand(...args);
    if (!this.watched.has(command)) {
      this.watched.add(command);
      const sentOn = this.stream;
      command.promise.catch((error: unknown) => {
        // Only the connection the command waited on is dropped, never a newer one.
        if (error instanceof Error && error.message === 'Command timed out' && this.status === 'ready' && this.stream === sentOn) this.disconnect(true);
      });
    }
    return result;
  }
}

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
  /** False while Redis is configured but unreachable, when each instance counts in its own memory. */
  redisReady(): boolean;
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  tiers: readonly RateTier[];
  /** redis:// URL; null keeps the counters in memory. */
  redisUrl: string | null;
  /** Prefix of every Redis key (tests isolate runs with it). */
  keyPrefix?: string;
  /** How long start-up, and each reconnection, waits for Redis before going on with the fallback. */
  connectTimeoutMs?: number;
  /** How long one Redis command may go unanswered before the fallback answers (REDIS_COMMAND_TIMEOUT_MS). */
  commandTimeoutMs?: number;
  /** Counters kept in memory per tier (default MEMORY_KEYS_MAX); tests make it small. */
  memoryKeysMax?: number;
}

export async function createRateLimiter(options: RateLimiterOptions): Promise<RateLimiter> {
  const prefix = options.keyPrefix ?? 'observatory-rl';
  let redis: Redis | null = null;
  if (options.redisUrl !== null) {
    const connectTimeoutMs = options.connectTimeoutMs ?? REDIS_CONNECT_TIMEOUT_MS;
    // No offline queue: while disconnected a call fails at once and the insurance limiter answers.
    // A Redis that accepts connections but never answers is bounded by the command timeout.
    redis = new FailFastRedis(options.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      // A call the fallback has answered is not sent to Redis again once it is back (one already on
      // the wire when Redis went silent may still be counted there when the link returns).
      autoResendUnfulfilledCommands: false,
      lazyConnect: true,
      connectTimeout: connectTimeoutMs,
      commandTimeout: options.commandTimeoutMs ?? REDIS_COMMAND_TIMEOUT_MS,
    });
    redis.on('error', () => {}); // reconnects by itself; calls meanwhile use the fallback
    await Promise.race([redis.connect().catch(() => {}), new Promise((resolve) => setTimeout(resolve, connectTimeoutMs).unref())]);
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
    redisReady: () => redis !== null && redis.status === 'ready',
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
