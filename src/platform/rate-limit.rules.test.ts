import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BoundedMemoryStorage, createRateLimiter, MEMORY_KEYS_MAX } from './rate-limit.ts';

// The rate-limit rules beyond rate-limit.test.ts (docs/agent-api/README.md "Rate limits"): what a refusal
// tells the caller, tiers that never share a counter, and the bounded store's edges.

const START = new Date('2026-03-01T00:00:00Z');
afterEach(() => {
  vi.useRealTimers();
});

describe('createRateLimiter decisions', () => {
  const tiers = [
    { name: 'minute', points: 2, durationSec: 60 },
    { name: 'other', points: 5, durationSec: 10 },
  ];

  it('tells a refused caller how long to wait, in whole seconds and never less than one', async () => {
    vi.useFakeTimers({ now: START });
    const limiter = await createRateLimiter({ tiers, redisUrl: null });
    try {
      expect(limiter.store).toBe('memory');
      expect(await limiter.consume('minute', 'k')).toEqual({ allowed: true, limit: 2, remaining: 1, resetMs: 60_000, retryAfterSec: 60 });
      vi.setSystemTime(START.getTime() + 500);
      expect(await limiter.consume('minute', 'k')).toEqual({ allowed: true, limit: 2, remaining: 0, resetMs: 59_500, retryAfterSec: 60 });
      vi.setSystemTime(START.getTime() + 58_500);
      // Refused: 1.5 s left is 2 s to wait; the refused call is counted, remaining stays 0, not −1.
      expect(await limiter.consume('minute', 'k')).toEqual({ allowed: false, limit: 2, remaining: 0, resetMs: 1_500, retryAfterSec: 2 });
      vi.setSystemTime(START.getTime() + 59_999);
      expect(await limiter.consume('minute', 'k')).toMatchObject({ allowed: false, resetMs: 1, retryAfterSec: 1 });
      vi.setSystemTime(START.getTime() + 60_000);
      expect(await limiter.consume('minute', 'k')).toMatchObject({ allowed: true, remaining: 1 });
    } finally {
      await limiter.close();
    }
  });

  it('counts each tier apart, with its own points and window, under the same key', async () => {
    const limiter = await createRateLimiter({ tiers, redisUrl: null });
    try {
      await limiter.consume('minute', 'same', 2);
      expect((await limiter.consume('minute', 'same')).allowed).toBe(false);
      expect(await limiter.consume('other', 'same')).toMatchObject({ allowed: true, limit: 5, remaining: 4, resetMs: 10_000, retryAfterSec: 10 });
    } finally {
      await limiter.close();
    }
  });

  it('takes and gives back one point unless told otherwise', async () => {
    const limiter = await createRateLimiter({ tiers, redisUrl: null });
    try {
      expect((await limiter.consume('other', 'k')).remaining).toBe(4);
      expect((await limiter.consume('other', 'k', 3)).remaining).toBe(1);
      await limiter.refund('other', 'k');
      expect((await limiter.consume('other', 'k', 0)).remaining).toBe(2);
      await expect(limiter.refund('missing', 'k')).rejects.toThrow('unknown rate tier missing');
    } finally {
      await limiter.close();
    }
  });

  it('keeps at most MEMORY_KEYS_MAX counters per tier by default', () => {
    expect(MEMORY_KEYS_MAX).toBe(100_000);
  });
});

describe.runIf(process.env.REDIS_URL)(`createRateLimiter with Redis (REDIS_URL)${process.env.REDIS_URL ? '' : ' (skipped: REDIS_URL is not set)'}`, () => {
  it('counts under <prefix>:<tier>:<key> in Redis, observatory-rl by default, and stops using Redis on close', async () => {
    const key = `rules-${randomUUID()}`;
    const limiter = await createRateLimiter({ tiers: [{ name: 'tier', points: 3, durationSec: 60 }], redisUrl: process.env.REDIS_URL! });
    const redis = new Redis(process.env.REDIS_URL!);
    try {
      expect(limiter.store).toBe('redis');
      await limiter.consume('tier', key, 2);
      expect(await redis.get(`observatory-rl:tier:${key}`)).toBe('2');
      const ttl = await redis.pttl(`observatory-rl:tier:${key}`);
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
      await limiter.close();
      // Disconnected, the insurance limiter in memory answers: a fresh count.
      expect(await limiter.consume('tier', key)).toMatchObject({ allowed: true, remaining: 2 });
      expect(await redis.get(`observatory-rl:tier:${key}`)).toBe('2');
    } finally {
      await redis.del(`observatory-rl:tier:${key}`);
      redis.disconnect();
      await limiter.close();
    }
  });
});

describe('BoundedMemoryStorage', () => {
  it('keeps a counter without expiry when the duration is 0 (msBeforeNext −1)', () => {
    vi.useFakeTimers({ now: START });
    const storage = new BoundedMemoryStorage(10);
    expect(storage.set('k', 2, 0)).toMatchObject({ consumedPoints: 2, msBeforeNext: -1, isFirstInDuration: true });
    expect(storage.incrby('k', 3, 0)).toMatchObject({ consumedPoints: 5, msBeforeNext: -1, isFirstInDuration: false });
    vi.setSystemTime(START.getTime() + 10 * 365 * 86_400_000);
    expect(storage.get('k')).toMatchObject({ consumedPoints: 5, msBeforeNext: -1 });
  });

  it('starts a counter on the first increment and adds to it within its window', () => {
    vi.useFakeTimers({ now: START });
    const storage = new BoundedMemoryStorage(10);
    expect(storage.get('k')).toBeNull();
    expect(storage.incrby('k', 1, 30)).toMatchObject({ consumedPoints: 1, msBeforeNext: 30_000, isFirstInDuration: true });
    vi.setSystemTime(START.getTime() + 10_000);
    expect(storage.incrby('k', 2, 30)).toMatchObject({ consumedPoints: 3, msBeforeNext: 20_000, isFirstInDuration: false });
    expect(storage.get('k')).toMatchObject({ consumedPoints: 3, msBeforeNext: 20_000, isFirstInDuration: false });
  });

  it('drops a counter at the instant its window ends, and counts afresh', () => {
    vi.useFakeTimers({ now: START });
    const storage = new BoundedMemoryStorage(10);
    storage.set('k', 4, 30);
    vi.setSystemTime(START.getTime() + 29_999);
    expect(storage.get('k')).toMatchObject({ consumedPoints: 4, msBeforeNext: 1 });
    vi.setSystemTime(START.getTime() + 30_000);
    expect(storage.size).toBe(1);
    expect(storage.get('k')).toBeNull();
    expect(storage.size).toBe(0);
    storage.set('k', 4, 30);
    vi.setSystemTime(START.getTime() + 60_000);
    expect(storage.incrby('k', 1, 30)).toMatchObject({ consumedPoints: 1, isFirstInDuration: true });
  });

  it('counts whole points, as the library does', () => {
    const storage = new BoundedMemoryStorage(10);
    expect(storage.set('k', 2.9, 30).consumedPoints).toBe(2);
    expect(storage.incrby('k', 1.5, 30).consumedPoints).toBe(3);
  });

  it('deletes, and says whether there was a counter', () => {
    const storage = new BoundedMemoryStorage(10);
    storage.set('k', 1, 30);
    expect(storage.delete('k')).toBe(true);
    expect(storage.delete('k')).toBe(false);
    expect(storage.get('k')).toBeNull();
  });

  it('restores only counters whose window has not ended (or that have none)', () => {
    vi.useFakeTimers({ now: START });
    const storage = new BoundedMemoryStorage(10);
    storage._restoreRecord('live', 2.5, START.getTime() + 1);
    storage._restoreRecord('ended', 2, START.getTime());
    storage._restoreRecord('bogus', 2, Number.NaN);
    storage._restoreRecord('forever', 3, null);
    // Counted before any read: a counter whose window has ended is not stored at all.
    expect(storage.size).toBe(2);
    expect(storage.get('live')).toMatchObject({ consumedPoints: 2, msBeforeNext: 1 });
    expect(storage.get('ended')).toBeNull();
    expect(storage.get('bogus')).toBeNull();
    expect(storage.get('forever')).toMatchObject({ consumedPoints: 3, msBeforeNext: -1 });
    expect(storage.size).toBe(2);
  });
});
