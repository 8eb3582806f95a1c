import { useCallback } from 'react';
import { useSearchParams } from 'react-router';

/**
 * Filters and the time window live in the address, so a view can be shared and reloaded as it
 * is. `get` reads one with its default; `set` changes several at once (null removes one).
 */
export function useUrlState() {
  const [params, setParams] = useSearchParams();
  const get = useCallback((name: string, fallback = '') => params.get(name) ?? fallback, [params]);
  const set = useCallback(
    (changes: Record<string, string | null>) =>
      setParams(
        (previous) => {
          const next = new URLSearchParams(previous);
          for (const [k, v] of Object.entries(changes)) {
            if (v === null || v === '') next.delete(k);
            else next.set(k, v);
          }
          return next;
        },
        { replace: false },
      ),
    [setParams],
  );
  return { get, set, params };
}

export const WINDOWS = ['1h', '6h', '24h', '7d', '30d'] as const;
export type WindowName = (typeof WINDOWS)[number];

const WINDOW_MS: Record<WindowName, number> = { '1h': 3_600_000, '6h': 21_600_000, '24h': 86_400_000, '7d': 604_800_000, '30d': 2_592_000_000 };

/** The window's bounds, ending now (rounded down to the minute so a reload asks the same thing). */
export function windowBounds(name: string, now = Date.now()): { from: string; to: string; ms: number } {
  const ms = WINDOW_MS[(WINDOWS as readonly string[]).includes(name) ? (name as WindowName) : '24h'];
  const to = Math.floor(now / 60_000) * 60_000;
  return { from: new Date(to - ms).toISOString(), to: new Date(to).toISOString(), ms };
}
