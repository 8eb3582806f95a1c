import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import * as rollups from '../dashboard/repository.ts';
import { reclassify } from '../vendors/classify.ts';
import type { RegistryHolder } from '../vendors/registry.ts';
import type { RdnsFact } from '../vendors/reverse-dns.ts';
import * as repo from './repository.ts';
import type { Fingerprinter } from './service.ts';
import { isVerifiedClass } from './tarpit.ts';

/**
 * Judging stored events again when the reverse DNS answer for their address arrives
 * (docs/honeypot/vendors.md, "Reverse DNS"). Ingest judged them on what it knew (the lookup
 * `pending`) and answered at once; here the same rule runs over the stored evidence with the
 * answer in it, and the class, vendor, proof, evidence and fingerprint are written over the old
 * ones, with the rollups and fingerprint counters moved from the old verdict to the new one.
 */

/** Events judged again in one transaction at most; the rest are judged in the next. */
export const REJUDGE_MAX_EVENTS = 2000;
/** Answers (addresses) that share one transaction at most. */
export const REJUDGE_MAX_ADDRESSES = 64;

export interface RejudgeDeps {
  db: Db;
  registry: RegistryHolder;
  fingerprints: Pick<Fingerprinter, 'fingerprintOf'>;
  /** The keyed hash of a raw address, as ingest stores it. */
  hashIp(ip: string): string;
  /** Told when events were queued for the rollups again. */
  onPending?: () => void;
  /** Events judged again per transaction at most; REJUDGE_MAX_EVENTS unless given (tests). */
  maxEvents?: number;
}

/** The verdict a stored event gets with the reverse DNS fact in its evidence. */
function rejudgedVerdict(registry: RegistryHolder['current'], fingerprints: RejudgeDeps['fingerprints'], event: repo.AwaitingEvent, fact: RdnsFact) {
  const verdict = reclassify(registry, { ua: event.uaRaw, headers: event.headers, evidence: { ...event.evidence, rdns: fact } });
  const verifiedVendorId = isVerifiedClass(verdict.uaClass) ? verdict.vendorId : null;
  const { fingerprintId, uaNormalized } = fingerprints.fingerprintOf({
    ja4: event.ja4,
    ua: event.uaRaw,
    source: { verifiedVendorId, asn: event.asn, ipHash: event.ipHash },
  });
  return { verdict, fingerprintId, uaNormalized };
}

/** One reverse DNS answer: the address asked about and what it says. */
export interface RdnsAnswer {
  ip: string;
  fact: RdnsFact;
}

export function createRejudge(deps: RejudgeDeps) {
  const maxEvents = deps.maxEvents ?? REJUDGE_MAX_EVENTS;

  /**
   * Judges again, in one transaction, the events waiting for the reverse DNS of these addresses,
   * each with its address's fact (never `pending`: `enqueue` keeps those out): the oldest
   * `maxEvents` of them at most. True when the bound was reached, so that some may still wait.
   */
  async function rejudgeAnswers(answers: readonly RdnsAnswer[]): Promise<boolean> {
    // Two spellings of one address hash alike: the later answer stands.
    const factOf = new Map(answers.map(({ ip, fact }) => [deps.hashIp(ip), fact]));
    const result = await withTransaction(deps.db, async (tx) => {
      await rollups.lockForRejudge(tx);
      const events = await repo.eventsAwaitingRdns(tx, [...factOf.keys()], maxEvents);
      if (events.length === 0) return { events: 0, queued: false };
      const updates: repo.VerdictUpdate[] = [];
      const names = new Map<string, [string, string, string]>();
      const changed: string[] = [];
      for (const event of events) {
        const { verdict, fingerprintId, uaNormalized } = rejudgedVerdict(deps.registry.current, deps.fingerprints, event, factOf.get(event.ipHash)!);
        updates.push({ id: event.id, uaClass: verdict.uaClass, vendorId: verdict.vendorId, proof: verdict.proof, evidence: verdict.evidence, fingerprintId });
        if (verdict.uaClass !== event.uaClass || fingerprintId !== event.fingerprintId) {
          changed.push(event.id);
          names.set(`${event.tenantId}|${fingerprintId}`, [event.tenantId, fingerprintId, uaNormalized]);
        }
      }
      // Only the events whose class or fingerprint moved touch the counts; the others get their evidence.
      const waiting = await rollups.pendingAmong(tx, changed);
      const applied = changed.filter((id) => !waiting.has(id));
      await rollups.subtractEvents(tx, applied);
      await repo.updateVerdicts(tx, updates);
      await rollups.queueRejudged(tx, applied, [...waiting], [...names.values()]);
      return { events: events.length, queued: applied.length > 0 || waiting.size > 0 };
    });
    if (result.queued) deps.onPending?.();
    return result.events >= maxEvents;
  }

  // Answers arrive one by one from the lookups and wait here, the newest per address, while the
  // previous transaction runs; then up to REJUDGE_MAX_ADDRESSES of them share the next one (a
  // flood of new addresses costs one transaction per batch of answers, not per answer). A batch
  // that reached `maxEvents` is asked again: what it judged no longer waits, so each pass
  // moves on, and no waiting event is left for an answer that may never come again.
  const waitingAnswers = new Map<string, RdnsFact>();
  let draining: Promise<void> | null = null;
  async function drain(log?: FastifyBaseLogger): Promise<void> {
    while (waitingAnswers.size > 0) {
      const batch: RdnsAnswer[] = [];
      for (const [ip, fact] of waitingAnswers) {
        batch.push({ ip, fact });
        waitingAnswers.delete(ip);
        if (batch.length >= REJUDGE_MAX_ADDRESSES) break;
      }
      try {
        const full = await rejudgeAnswers(batch);
        // A newer answer for an address that arrived meanwhile stands over the one asked again.
        if (full) for (const { ip, fact } of batch) if (!waitingAnswers.has(ip)) waitingAnswers.set(ip, fact);
      } catch (error) {
        log?.warn({ err: error, addresses: batch.length }, 'could not judge events again with their reverse DNS answers; they stay as judged and wait for the next answer');
      }
    }
  }
  function startDraining(log?: FastifyBaseLogger): void {
    if (draining !== null) return;
    // After this turn of the event loop, so that the answers that arrive in it share the first batch.
    draining = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => drain(log))
      .finally(() => {
        draining = null;
        // An answer that came after the last batch was taken, as the drain was ending.
        if (waitingAnswers.size > 0) startDraining(log);
      });
  }
  function enqueue(ip: string, fact: RdnsFact, log?: FastifyBaseLogger): void {
    if (fact.status === 'pending') return;
    waitingAnswers.delete(ip);
    waitingAnswers.set(ip, fact);
    startDraining(log);
  }

  return {
    enqueue,
    /** Resolves when no answer waits and no batch is being judged (tests, shutdown). */
    async settled(): Promise<void> {
      while (draining !== null) await draining;
    },
  };
}
