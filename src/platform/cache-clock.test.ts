import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from './clock.ts';
import { createClockCache } from './memo.ts';

describe('createClockCache', () => {
  it('serves an entry while its age is at most the TTL by the given clock, and forgets it after', () => {
    const clock = new ManualClock('2026-11-25T08:00:00.000Z');
    const cache = createClockCache<string, number>({ max: 10, ttlMs: 30_000, clock });
    cache.set('k', 1);
    clock.advance(30_000);
    expect(cache.get('k')).toBe(1);
    clock.advance(1);
    expect(cache.get('k')).toBeUndefined();
  });

  it('does not age by real time: performance.now() racing ahead changes nothing', () => {
    const clock = new ManualClock('2026-11-25T08:00:00.000Z');
    const cache = createClockCache<string, number>({ max: 10, ttlMs: 1000, clock });
    const real = performance.now();
    const spy = vi.spyOn(performance, 'now').mockReturnValue(real + 3_600_000);
    try {
      cache.set('k', 1);
      spy.mockReturnValue(real + 7_200_000);
      expect(cache.get('k')).toBe(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('keeps at most max entries, dropping the least recently used', () => {
    const cache = createClockCache<string, number>({ max: 2, ttlMs: 1000, clock: new ManualClock() });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.get('a');
    cache.set('c', 3);
    expect([...cache.keys()].sort()).toEqual(['a', 'c']);
  });
});
