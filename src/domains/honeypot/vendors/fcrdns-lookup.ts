import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { normaliseIp } from '../enrichment/ip.ts';
import { arpaName, dnsName, isUnder, MAX_PTR_NAMES, type RdnsFact } from './reverse-dns.ts';

/**
 * Forward-confirmed reverse DNS lookups, off the ingest's path (docs/honeypot/vendors.md,
 * "Reverse DNS"). Ingest asks `known(ip)`: a cached answer comes back at once; otherwise a lookup
 * is queued and `pending` comes back, and `onAnswer` is told when the lookup ends, so the events
 * judged meanwhile can be judged again. Bounded everywhere: lookups at once, addresses queued,
 * cached answers, names per answer, and each DNS query's time.
 */

export interface FcrdnsOptions {
  /** `host` or `host:port` of the DNS servers to ask; empty asks the system's (/etc/resolv.conf). */
  servers: readonly string[];
  timeoutMs: number;
  /** Lookups running at once. */
  concurrency: number;
  /** Addresses awaiting an answer (queued or being looked up) at most; more are answered `skipped: busy`. */
  maxQueued: number;
  /** Answers kept at most (least recently used go first). */
  cacheSize: number;
  /** How long an answer is used (DNS does not give node the PTR record's TTL). */
  answerTtlMs: number;
  /** How long a failed lookup is remembered before it is tried again. */
  failureTtlMs: number;
  /** Every domain some vendor publishes: only PTR names under one are forward-resolved. */
  domains: () => readonly string[];
  now: () => number;
  onAnswer: (ip: string, fact: RdnsFact) => void;
}

export interface FcrdnsStats {
  cached: number;
  queued: number;
  running: number;
  lookups: number;
  skippedBusy: number;
}

export interface FcrdnsLookup {
  /** The answer cached for `ip`, else `pending` (a lookup is queued or running) or `skipped: busy`. */
  known(ip: string): RdnsFact;
  stats(): FcrdnsStats;
  /** Resolves when no lookup is queued or running (tests, shutdown). */
  idle(): Promise<void>;
  close(): void;
}

/** DNS codes that answer the question (the name has no such record), as opposed to failing to. */
const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA', 'NOTFOUND', 'NODATA']);

const codeOf = (error: unknown): string => (error as NodeJS.ErrnoException)?.code ?? 'ERROR';

/** The forward-confirmed reverse DNS of one address through `resolver`; never throws. */
export async function lookupFcrdns(resolver: Pick<Resolver, 'resolvePtr' | 'resolve4' | 'resolve6'>, ip: string, domains: readonly string[]): Promise<RdnsFact> {
  const address = normaliseIp(ip);
  const question = address === null ? null : arpaName(address);
  if (address === null || question === null) return { status: 'answered', ptr: [], names: [] };
  let ptr: string[];
  try {
    // resolvePtr, not reverse: reverse reports every failure (a timeout, SERVFAIL) as ENOTFOUND,
    // which would read as "this address has no name" and make a liar of a crawler.
    ptr = (await resolver.resolvePtr(question)).slice(0, MAX_PTR_NAMES).map(dnsName);
  } catch (error) {
    const code = codeOf(error);
    return NO_RECORD.has(code) ? { status: 'answered', ptr: [], names: [] } : { status: 'failed', error: `ptr:${code}` };
  }
  const names: string[] = [];
  let forwardError: string | null = null;
  for (const name of ptr.filter((n) => domains.some((d) => isUnder(n, d)))) {
    try {
      const addresses = isIP(address) === 4 ? await resolver.resolve4(name) : await resolver.resolve6(name);
      if (addresses.some((a) => normaliseIp(a) === address)) names.push(name);
    } catch (error) {
      const code = codeOf(error);
      if (!NO_RECORD.has(code)) forwardError = `forward:${code}`;
    }
  }
  // A name that could not be forward-resolved for want of a server is not a refusal.
  if (names.length === 0 && forwardError !== null) return { status: 'failed', error: forwardError };
  return { status: 'answered', ptr, names };
}

export function createFcrdnsLookup(options: FcrdnsOptions): FcrdnsLookup {
  const resolver = new Resolver({ timeout: options.timeoutMs, tries: 2 });
  if (options.servers.length > 0) resolver.setServers([...options.servers]);
  const cache = new Map<string, { fact: RdnsFact; until: number }>();
  const queued: string[] = [];
  const waiting = new Set<string>();
  let running = 0;
  let lookups = 0;
  let skippedBusy = 0;
  let closed = false;
  let idleWaiters: (() => void)[] = [];

  function remember(ip: string, fact: RdnsFact): void {
    cache.delete(ip);
    cache.set(ip, { fact, until: options.now() + (fact.status === 'answered' ? options.answerTtlMs : options.failureTtlMs) });
    while (cache.size > options.cacheSize) cache.delete(cache.keys().next().value as string);
  }

  function pump(): void {
    while (!closed && running < options.concurrency && queued.length > 0) {
      const ip = queued.shift()!;
      running += 1;
      lookups += 1;
      void lookupFcrdns(resolver, ip, options.domains()).then((fact) => {
        running -= 1;
        waiting.delete(ip);
        if (!closed) {
          remember(ip, fact);
          options.onAnswer(ip, fact);
        }
        pump();
      });
    }
    if (running === 0 && queued.length === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  return {
    known(ip) {
      const key = normaliseIp(ip) ?? ip;
      const hit = cache.get(key);
      if (hit !== undefined && hit.until > options.now()) {
        cache.delete(key);
        cache.set(key, hit);
        return hit.fact;
      }
      if (waiting.has(key)) return { status: 'pending' };
      if (closed || waiting.size >= options.maxQueued) {
        skippedBusy += 1;
        return { status: 'skipped', why: 'busy' };
      }
      waiting.add(key);
      queued.push(key);
      queueMicrotask(pump);
      return { status: 'pending' };
    },
    stats: () => ({ cached: cache.size, queued: queued.length, running, lookups, skippedBusy }),
    idle: () => (running === 0 && queued.length === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve))),
    close() {
      closed = true;
      queued.length = 0;
      resolver.cancel();
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    },
  };
}
