import { LRUCache } from 'lru-cache';
import type { Clock } from './clock.ts';

/**
 * A pure function of one string, remembered for the `max` most recently used arguments. For the
 * per-event rules that depend on the User-Agent alone (bot patterns, normalisation): a honeypot
 * sees a bounded set of user agents again and again, and the bound keeps a flood of unique ones
 * from growing memory. Nothing expires: the answers never change.
 */
export function memoizeByText<R extends NonNullable<unknown>>(fn: (text: string) => R, max = 10_000): (text: string) => R {
  const cache = new LRUCache<string, R>({ max });
  return (text: string) => {
    const known = cache.get(text);
    if (known !== undefined) return known;
    const value = fn(text);
    cache.set(text, value);
    return value;
  };
}

/**
 * A bounded least-recently-used cache whose entries expire `ttlMs` after they were set, measured
 * by the service's Clock. lru-cache alone ages entries by performance.now(), a clock no test can
 * move and no replay shares; here a documented "remembered 30 s" is 30 s of the time every other
 * rule reads. An entry is served while its age is at most `ttlMs` and refreshed after. No timers:
 * the clock is read at each lookup (ttlResolution 0) and nothing is purged in the background.
 */
export function createClockCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(options: { max: number; ttlMs: number; clock: Clock }): LRUCache<K, V> {
  const { clock } = options;
  return new LRUCache<K, V>({ max: options.max, ttl: options.ttlMs, ttlResolution: 0, ttlAutopurge: false, perf: { now: () => clock.now().getTime() } });
}
