import type { IngestAnswer } from './types.ts';

/**
 * What the router knows of each client from the service's answers: keyed by what the router can
 * see (address, User-Agent, JA4), finer than the service's fingerprint, so that one fingerprint's
 * tarpit reaches a new address of it through that address's first answer. Bounded: the least
 * recently seen client is forgotten first (it then waits for a fresh answer once more).
 */
export interface Verdict {
  fingerprintId: string;
  uaClass: string;
  tarpit: { active: boolean; delayMs: number };
}

export function verdictCache(maxEntries: number) {
  const entries = new Map<string, Verdict>();
  /** The key at the newest end of `entries`: one client's run of requests moves nothing. */
  let newest: string | null = null;
  return {
    get(key: string): Verdict | undefined {
      const found = entries.get(key);
      if (found !== undefined && key !== newest) {
        entries.delete(key);
        entries.set(key, found);
        newest = key;
      }
      return found;
    },
    set(key: string, verdict: Verdict): void {
      // Setting an existing key keeps its place: the newest one stays the newest.
      if (key !== newest) entries.delete(key);
      entries.set(key, verdict);
      newest = key;
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
    },
    get size() {
      return entries.size;
    },
  };
}

export const clientKey = (ip: string, ua: string, ja4: string | undefined) => `${ip}\n${ja4 ?? '-'}\n${ua}`;

/** An event sent and not yet answered: the client it speaks for, and who waits for its answer. */
export interface PendingAnswer {
  key: string;
  waiter: ((verdict: Verdict) => void) | null;
}

/**
 * The service's answers, turned into each client's latest verdict (the router and the
 * middleware's tarpit mode). `expect` notes which client an event id speaks for; `onAnswers`
 * refreshes that client's verdict and wakes the waiter, if any. Ids never answered (their event
 * was dropped or refused) are forgotten all at once past `maxPending`: a forgotten id only costs
 * one verdict refresh.
 */
export function verdictTracker(options: { maxClients: number; maxPending?: number }) {
  const verdicts = verdictCache(options.maxClients);
  const maxPending = options.maxPending ?? 200_000;
  const pending = new Map<string, PendingAnswer>();
  return {
    get: (key: string) => verdicts.get(key),
    expect(id: string, key: string): PendingAnswer {
      if (pending.size >= maxPending) pending.clear();
      const entry: PendingAnswer = { key, waiter: null };
      pending.set(id, entry);
      return entry;
    },
    onAnswers(answers: readonly IngestAnswer[]): void {
      for (const answer of answers) {
        const entry = answer.id === null ? undefined : pending.get(answer.id);
        if (entry === undefined) continue;
        pending.delete(answer.id as string);
        const verdict: Verdict = { fingerprintId: answer.fingerprintId, uaClass: answer.uaClass, tarpit: answer.tarpit };
        verdicts.set(entry.key, verdict);
        entry.waiter?.(verdict);
      }
    },
    get clients() {
      return verdicts.size;
    },
    get pending() {
      return pending.size;
    },
  };
}

export type VerdictTracker = ReturnType<typeof verdictTracker>;
