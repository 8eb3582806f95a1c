import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiFailure, type ApiError } from '../api/client';

export interface QueryState<T> {
  data: T | null;
  error: ApiError | null;
  loading: boolean;
  /** Loads again; the previous data stays on screen meanwhile (no layout shift). */
  reload: () => void;
}

/**
 * Runs `load` when `key` changes (and every `refreshMs` when given), keeping the last answer on
 * screen while the next one loads and dropping answers that arrive after a newer request.
 */
export function useQuery<T>(load: () => Promise<T>, key: unknown[], options: { refreshMs?: number; enabled?: boolean } = {}): QueryState<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(options.enabled !== false);
  const [tick, setTick] = useState(0);
  const generation = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const enabled = options.enabled !== false;

  useEffect(() => {
    if (!enabled) return;
    const mine = ++generation.current;
    setLoading(true);
    loadRef
      .current()
      .then((value) => {
        if (mine !== generation.current) return;
        setData(value);
        setError(null);
      })
      .catch((cause: unknown) => {
        if (mine !== generation.current) return;
        setError(cause instanceof ApiFailure ? cause.detail : { status: 0, reason: 'client', human: String(cause) });
      })
      .finally(() => {
        if (mine === generation.current) setLoading(false);
      });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...key, tick, enabled]);

  useEffect(() => {
    if (!options.refreshMs || !enabled) return;
    const timer = setInterval(() => setTick((n) => n + 1), options.refreshMs);
    return () => clearInterval(timer);
  }, [options.refreshMs, enabled]);

  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { data, error, loading, reload };
}

/** A write's state: run it, show progress while it runs, its error when it fails. */
export function useAction<A extends unknown[], T>(run: (...args: A) => Promise<T>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const execute = useCallback(
    async (...args: A): Promise<T | null> => {
      setBusy(true);
      setError(null);
      try {
        return await run(...args);
      } catch (cause) {
        setError(cause instanceof ApiFailure ? cause.detail : { status: 0, reason: 'client', human: String(cause) });
        return null;
      } finally {
        setBusy(false);
      }
    },
    [run],
  );
  return { execute, busy, error, clearError: () => setError(null) };
}
