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

/** Events of one address judged again per answer at most; the rest keep waiting for the next answer. */
export const REJUDGE_MAX_EVENTS = 2000;

export interface RejudgeDeps {
  db: Db;
  registry: RegistryHolder;
  fingerprints: Pick<Fingerprinter, 'fingerprintOf'>;
  /** The keyed hash of a raw address, as ingest stores it. */
  hashIp(ip: string): string;
  /** Told when events were queued for the rollups again. */
  onPending?: () => void;
}

export interface RejudgeResult {
  events: number;
  changed: number;
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

export function createRejudge(deps: RejudgeDeps) {
  /** Judges again the events from `ip` that wait for its reverse DNS, with `fact`. */
  async function rejudge(ip: string, fact: RdnsFact): Promise<RejudgeResult> {
    if (fact.status === 'pending') return { events: 0, changed: 0 };
    const ipHash = deps.hashIp(ip);
    const result = await withTransaction(deps.db, async (tx) => {
      await rollups.lockForRejudge(tx);
      const events = await repo.eventsAwaitingRdns(tx, ipHash, REJUDGE_MAX_EVENTS);
      if (events.length === 0) return { events: 0, changed: 0, queued: false };
      const updates: repo.VerdictUpdate[] = [];
      const names = new Map<string, [string, string, string]>();
      const changed: string[] = [];
      for (const event of events) {
        const { verdict, fingerprintId, uaNormalized } = rejudgedVerdict(deps.registry.current, deps.fingerprints, event, fact);
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
      return { events: events.length, changed: changed.length, queued: applied.length > 0 || waiting.size > 0 };
    });
    if (result.queued) deps.onPending?.();
    return { events: result.events, changed: result.changed };
  }

  // Answers arrive one by one from the lookups; their re-judges run one after another, and
  // `settled` waits for the last (tests, shutdown).
  let chain: Promise<unknown> = Promise.resolve();
  function enqueue(ip: string, fact: RdnsFact, log?: FastifyBaseLogger): void {
    chain = chain.then(() =>
      rejudge(ip, fact).catch((error: unknown) => {
        log?.warn({ err: error }, 'could not judge events again with their reverse DNS answer; they stay as judged and wait for the next answer');
      }),
    );
  }

  return { rejudge, enqueue, settled: () => chain.then(() => undefined) };
}
