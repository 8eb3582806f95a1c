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
  return {
    get(key: string): Verdict | undefined {
      const found = entries.get(key);
      if (found !== undefined) {
        entries.delete(key);
        entries.set(key, found);
      }
      return found;
    },
    set(key: string, verdict: Verdict): void {
      entries.delete(key);
      entries.set(key, verdict);
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
    },
    get size() {
      return entries.size;
    },
  };
}

export const clientKey = (ip: string, ua: string, ja4: string | undefined) => `${ip}\n${ja4 ?? '-'}\n${ua}`;
