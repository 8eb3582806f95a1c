import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BoundedRateLimiterMemory, createRateLimiter, type RateLimiter } from './rate-limit.ts';

// The limiter's in-memory store is bounded: a caller inventing keys (agent names, IPv6 addresses,
// bogus API keys) must not grow the process without limit, nor start a timer per key.
afterEach(() => {
  vi.useRealTimers();
});

const limited = (maxKeys: number, points = 5, duration = 60) => new BoundedRateLimiterMemory({ points, duration, keyPrefix: `t-${randomUUID()}`, maxKeys });

async function remainingAfterConsume(limiter: BoundedRateLimiterMemory, key: string): Promise<number> {
  const res = await limiter.consume(key).catch((rejected: unknown) => rejected as { remainingPoints: number });
  return res.remainingPoints;
}

describe('BoundedRateLimiterMemory', () => {
  it('keeps at most maxKeys counters however many keys are consumed, with no timer per key', async () => {
    vi.useFakeTimers();
    const limiter = limited(100);
    for (let i = 0; i < 10_000; i++) await limiter.consume(`key-${i}`);
    expect(limiter.storedKeys).toBe(100);
    expect(limiter.dump().storage.length).toBe(100);
    // The library's own store would hold 10,000 entries and 10,000 timers here.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('counts a key correctly while it stays within the bound, and refuses past its points', async () => {
    const limiter = limited(100, 5);
    expect(await remainingAfterConsume(limiter, 'hot')).toBe(4);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 50; i++) await limiter.consume(`cold-${round}-${i}`);
      expect(await remainingAfterConsume(limiter, 'hot')).toBe(3 - round);
    }
    await limiter.consume('hot');
    await expect(limiter.consume('hot')).rejects.toMatchObject({ remainingPoints: 0, consumedPoints: 6 });
    expect(limiter.storedKeys).toBeLessThanOrEqual(100);
  });

  it('forgets the least recently used counter first, never one in active use', async () => {
    const limiter = limited(10, 2);
    await limiter.consume('idle');
    await limiter.consume('idle');
    for (let i = 0; i < 20; i++) {
      await limiter.consume('busy');
      await limiter.reward('busy'); // keep it in use without spending it
      await limiter.consume(`k-${i}`);
    }
    expect(await limiter.get('busy')).not.toBeNull();
    // `idle` was pushed out: a fresh window.
    expect(await limiter.get('idle')).toBeNull();
    expect(await remainingAfterConsume(limiter, 'idle')).toBe(1);
  });

  it('starts a fresh window once the old one has ended (a timestamp, not a timer)', async () => {
    vi.useFakeTimers({ now: new Date('2026-03-01T00:00:00Z') });
    const limiter = limited(100, 2, 60);
    await limiter.consume('a');
    const second = await limiter.consume('a');
    expect(second.remainingPoints).toBe(0);
    expect(second.msBeforeNext).toBe(60_000);
    vi.setSystemTime(new Date('2026-03-01T00:00:30Z'));
    await expect(limiter.consume('a')).rejects.toMatchObject({ msBeforeNext: 30_000 });
    vi.setSystemTime(new Date('2026-03-01T00:01:00Z'));
    const fresh = await limiter.consume('a');
    expect(fresh).toMatchObject({ remainingPoints: 1, consumedPoints: 1, msBeforeNext: 60_000, isFirstInDuration: true });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('supports get, set, delete, block, dump and restore as the library store does', async () => {
    vi.useFakeTimers({ now: new Date('2026-03-01T00:00:00Z') });
    const limiter = limited(100, 3, 60);
    await limiter.consume('a', 2);
    expect(await limiter.get('a')).toMatchObject({ consumedPoints: 2, remainingPoints: 1 });
    await limiter.set('b', 1, 10);
    expect(await limiter.get('b')).toMatchObject({ consumedPoints: 1, msBeforeNext: 10_000 });
    await limiter.block('c', 5);
    await expect(limiter.consume('c')).rejects.toMatchObject({ remainingPoints: 0 });
    expect(await limiter.delete('a')).toBe(true);
    expect(await limiter.get('a')).toBeNull();
    const dump = limiter.dump();
    expect(dump.storage.map((r) => r.key).sort()).toEqual(['b', 'c']);
    const other = new BoundedRateLimiterMemory({ points: 3, duration: 60, keyPrefix: limiter.keyPrefix, maxKeys: 100 });
    expect(other.restore(dump)).toEqual({ invalid: 0, expired: 0, restored: 2 });
    expect(await other.get('b')).toMatchObject({ consumedPoints: 1, msBeforeNext: 10_000 });
    vi.setSystemTime(new Date('2026-03-01T00:00:11Z'));
    expect(await other.get('b')).toBeNull();
  });
});

describe('createRateLimiter', () => {
  const tiers = [{ name: 'tier', points: 3, durationSec: 60 }];

  it('counts, refuses, refunds and bounds the counters of each tier (memoryKeysMax)', async () => {
    const limiter = await createRateLimiter({ tiers, redisUrl: null, memoryKeysMax: 10 });
    try {
      expect(limiter.store).toBe('memory');
      expect(await limiter.consume('tier', 'a')).toMatchObject({ allowed: true, limit: 3, remaining: 2 });
      await limiter.consume('tier', 'a', 2);
      expect(await limiter.consume('tier', 'a')).toMatchObject({ allowed: false, remaining: 0 });
      await limiter.refund('tier', 'a', 2);
      expect(await limiter.consume('tier', 'a')).toMatchObject({ allowed: true, remaining: 0 });
      // Eleven other keys push `a` out of a bound of ten: its counter starts again.
      for (let i = 0; i < 11; i++) await limiter.consume('tier', `other-${i}`);
      expect(await limiter.consume('tier', 'a')).toMatchObject({ allowed: true, remaining: 2 });
      await expect(limiter.consume('nope', 'a')).rejects.toThrow('unknown rate tier nope');
    } finally {
      await limiter.close();
    }
  });

  it('falls back to the bounded memory store as the insurance limiter when Redis does not answer', async () => {
    const limiter = await createRateLimiter({ tiers, redisUrl: 'redis://127.0.0.1:1', connectTimeoutMs: 200, memoryKeysMax: 10, keyPrefix: `test-${randomUUID()}` });
    try {
      expect(limiter.store).toBe('redis');
      for (let i = 1; i <= 3; i++) expect(await limiter.consume('tier', 'a')).toMatchObject({ allowed: true, remaining: 3 - i });
      expect(await limiter.consume('tier', 'a')).toMatchObject({ allowed: false, remaining: 0 });
      // The refused call was counted too (the library's way): two points back make room for one.
      await limiter.refund('tier', 'a', 2);
      expect(await limiter.consume('tier', 'a')).toMatchObject({ allowed: true, remaining: 0 });
      for (let i = 0; i < 11; i++) await limiter.consume('tier', `other-${i}`);
      expect(await limiter.consume('tier', 'a')).toMatchObject({ allowed: true, remaining: 2 });
    } finally {
      await limiter.close();
    }
  });

  describe.runIf(process.env.REDIS_URL)(`with Redis (REDIS_URL)${process.env.REDIS_URL ? '' : ' (skipped: REDIS_URL is not set)'}`, () => {
    let limiter: RateLimiter;
    afterEach(async () => limiter?.close());

    it('counts, refuses and refunds in Redis', async () => {
      limiter = await createRateLimiter({ tiers, redisUrl: process.env.REDIS_URL!, keyPrefix: `test-${randomUUID()}` });
      expect(limiter.store).toBe('redis');
      await limiter.consume('tier', 'a', 3);
      expect(await limiter.consume('tier', 'a')).toMatchObject({ allowed: false, remaining: 0 });
      await limiter.refund('tier', 'a', 2);
      expect(await limiter.consume('tier', 'a')).toMatchObject({ allowed: true, remaining: 0 });
    });
  });
});
