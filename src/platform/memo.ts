import { LRUCache } from 'lru-cache';

/**
 * A pure function of one string, remembered for the `max` most recently used arguments. For the
 * per-event rules that depend on the User-Agent alone (bot patterns, normalisation): a honeypot
 * sees a bounded set of user agents again and again, and the bound keeps a flood of unique ones
 * from growing memory.
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
