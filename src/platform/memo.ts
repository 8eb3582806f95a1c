import { LRUCache } from 'lru-cache';
import type { Clock } from './clock.ts';

/**
 * A bounded map of recently used entries, in two generations: new entries go into the newer map;
 * when it holds `generation` entries the older map is dropped and the newer takes its place, and
 * an entry read from the older map moves back into the newer. So what is used keeps its place, at
 * most `2 × generation` entries are held, and a lookup is one or two Map reads with no list to
 * keep in order: an LRU cache's bookkeeping costs more than the per-event work these caches save
 * when the keys are all new (a flood of fresh addresses, say).
 */
export interface RecentMap<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
  /** Entries held now: at most twice the generation. */
  readonly size: number;
}

export function createRecentMap<K, V>(generation: number): RecentMap<K, V> {
  if (!Number.isInteger(generation) || generation < 1) throw new Error(`generation must be a positive integer, got ${generation}`);
  let newer = new Map<K, V>();
  let older = new Map<K, V>();
  const set = (key: K, value: V): void => {
    if (newer.size >= generation) {
      older = newer;
      newer = new Map();
    }
    newer.set(key, value);
  };
  return {
    get(key) {
      const value = newer.get(key);
      if (value !== undefined) return value;
      const old = older.get(key);
      if (old !== undefined) set(key, old);
      return old;
    },
    set,
    get size() {
      return newer.size + older.size;
    },
  };
}

/**
 * A pure function of one string, remembered for the most recently used arguments (at most `max`;
 * see `createRecentMap`). For the per-event rules that depend on one text alone (bot patterns,
 * normalisation, keyed hashes of addresses): a honeypot sees a bounded set of user agents and
 * senders again and again, and the bound keeps a flood of unique ones from growing memory.
 * Nothing expires: the answers never change.
 */
export function memoizeByText<R extends NonNullable<unknown>>(fn: (text: string) => R, max = 10_000): (text: string) => R {
  const cache = createRecentMap<string, R>(Math.max(1, Math.floor(max / 2)));
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
