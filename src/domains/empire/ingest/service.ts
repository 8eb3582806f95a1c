import { randomUUID } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import { canonicalJson, sha256Hex } from '../../../platform/crypto.ts';
import { createBufferedWrites } from '../../../platform/db/buffered-writes.ts';
import type { Db } from '../../../platform/db/client.ts';
import { SLO_SAMPLE_RETENTION_MS } from '../../../platform/db/retention.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { assertToolsetInReach } from '../../../platform/http/auth.ts';
import { Nullable, type Principal } from '../../../platform/http/registry.ts';
import { type Ed25519Verifier } from '../../../platform/ed25519-pool.ts';
import type { DomainMetrics } from '../../../platform/metrics.ts';
import {
  type AttestationRow,
  candidateKeys,
  type Decision,
  decideAdmission,
  type ProvenanceService,
  type RejectionReason,
  type VerifyingKey,
} from '../../provenance/index.ts';
import { TOOLSET_PATTERN } from '../../../platform/toolset-name.ts';
import { checkEvents } from './event-checks.ts';
import * as repo from './repository.ts';

/** Spec D4: at most this many events per request. */
export const MAX_EVENTS_PER_REQUEST = 500;
/** The replay envelope's version for events stored now (spec C, Events item 3). */
export const EMPIRE_SCHEMA_VERSION = 1;
/** `source` of the attestation rows the empire ingest writes. */
export const ATTESTATION_SOURCE = 'empire-ingest';

export const EmpireEvent = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128, description: 'The toolset\'s own id for the event, unique per toolset; sending it again stores nothing new.' }),
    eventType: Type.String({ minLength: 1, maxLength: 128 }),
    ts: Type.Optional(Type.String({ format: 'date-time', description: 'When it happened; default the receive time. At most 30 days in the past and 5 minutes in the future.' })),
    tenant: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    causedBy: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 128, description: 'The id of the event of the same toolset that caused this one.' }))),
    payload: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'Any JSON object: at most 32 levels deep and 64 KiB in its RFC 8785 form, finite numbers, well-formed Unicode.' }),
    ),
    keyId: Type.Optional(Type.String({ format: 'uuid', description: 'The provenance key that signed it; without it every key of the toolset is tried.' })),
    signatureB64: Type.Optional(Type.String({ maxLength: 200, description: 'Standard base64 of the Ed25519 signature over the event\'s RFC 8785 canonical bytes.' })),
  },
  { additionalProperties: false },
);
export type EmpireEvent = Static<typeof EmpireEvent>;

export const EmpireIngestBody = Type.Object(
  {
    toolset: Type.String({ pattern: TOOLSET_PATTERN, description: '3 to 128 characters: a letter, then letters, digits or -.' }),
    events: Type.Array(EmpireEvent, { minItems: 1, maxItems: MAX_EVENTS_PER_REQUEST }),
  },
  { additionalProperties: false },
);
export type EmpireIngestBody = Static<typeof EmpireIngestBody>;

export interface EventResult {
  id: string;
  eventId: string | null;
  compatMode: boolean;
  rejectionReason: RejectionReason | null;
}

export interface EmpireIngestResult {
  accepted: number;
  duplicates: number;
  rejected: number;
  results: EventResult[];
}

/** The answer, and what the request's SLO sample needs besides. */
export interface EmpireIngestOutcome {
  result: EmpireIngestResult;
  /**
   * Events admitted in compatibility mode although the toolset had an active key: a toolset that
   * can sign sent them unsigned (a misconfigured sender, or a stolen bearer token without the key).
   */
  compatWithKeys: number;
}

/**
 * The bytes a toolset signs (spec D4): the RFC 8785 serialisation of its toolset, id, eventType,
 * ts, tenant, causedBy and payload, absent members omitted (a `causedBy` of null is present).
 */
export function signedBytesOf(toolset: string, event: EmpireEvent): Buffer {
  const { id, eventType, ts, tenant, causedBy, payload } = event;
  // RFC 8785 (like JSON.stringify) leaves out members whose value is undefined: the ones not sent.
  return Buffer.from(canonicalJson({ toolset, id, eventType, ts, tenant, causedBy, payload }));
}

/**
 * The optional members a sender may leave out of what it signs, one bit each. A stored row cannot
 * tell a `ts` the sender left out (filled with the receive time) from one it sent, nor a `causedBy`
 * of null or a `payload` of {} sent from ones left out; replay needs to know to rebuild the bytes.
 * `tenant` needs no bit: it is never null when sent.
 */
export const SIGNED_MEMBER = { ts: 1, causedBy: 2, payload: 4 } as const;

export function signedMembersOf(event: EmpireEvent): number {
  return (
    (event.ts === undefined ? 0 : SIGNED_MEMBER.ts) |
    (event.causedBy === undefined ? 0 : SIGNED_MEMBER.causedBy) |
    (event.payload === undefined ? 0 : SIGNED_MEMBER.payload)
  );
}

/**
 * Whether a decision is worth checking again against keys read afresh: a signature that failed
 * under the cached keys may be good under a key registered since on another instance. An unsigned
 * event fails the same under any keys.
 */
export function needsFreshKeys(decision: Decision): boolean {
  return decision.rejectionReason !== null && decision.rejectionReason !== 'unsigned';
}

/**
 * The `ts` as the sender spelled it, kept when it differs from the stored instant's ISO form (so
 * replay can rebuild the signed bytes); null when none was sent or it was sent in that form.
 */
export function sentSpelling(sent: string | undefined, stored: Date): string | null {
  if (sent === undefined) return null;
  return sent === stored.toISOString() ? null : sent;
}

/** An event on its way in: its signed bytes, their hash, and the instant it is stored under. */
interface Pending {
  event: EmpireEvent;
  bytes: Buffer;
  eventHash: string;
  ts: Date;
  /** The id of the attestation row its decision gets (the stored event points at it). */
  attestationId: string;
}

interface Judged extends Pending {
  decision: Decision;
}

export function createEmpireIngest(deps: {
  db: Db;
  clock: Clock;
  provenance: ProvenanceService;
  /** Checks the Ed25519 signatures (off the HTTP thread). */
  verifier: Ed25519Verifier;
  log: FastifyBaseLogger;
  /** Counts stored and rejected events (per instance); none when absent. */
  metrics?: Pick<DomainMetrics, 'empireEventsStored' | 'empireEventsRejected'>;
}) {
  const { db, clock, provenance } = deps;
  const samples = createBufferedWrites<repo.SampleRow>({ write: (rows) => repo.insertSamples(db, rows), log: deps.log, what: 'empire ingest samples' });

  /** Checks every signature against its candidate keys (on the verifier's threads); one decision per event. */
  async function decideAll(pending: readonly Pending[], keys: readonly VerifyingKey[], requireSigned: boolean): Promise<Decision[]> {
    const candidates = pending.map((p) => candidateKeys(p.event, keys));
    const checks = pending.flatMap((p, i) => candidates[i]!.map((key) => ({ publicKeyB64: key.publicKeyB64, message: p.bytes, signatureB64: p.event.signatureB64! })));
    const results = await deps.verifier.verifyMany(checks);
    let next = 0;
    return pending.map((p, i) => {
      const verified = results.slice(next, (next += candidates[i]!.length));
      return decideAdmission({ ts: p.ts, signatureB64: p.event.signatureB64 }, candidates[i]!, verified, requireSigned);
    });
  }

  /**
   * Decides every event under the toolset's keys and signing rule, read once for the request; a
   * failed signature is checked once more against keys read afresh (a key registered on another
   * instance). Also says whether the toolset had an active key.
   */
  async function judge(toolset: string, events: readonly EmpireEvent[], now: Date): Promise<{ judged: Judged[]; hasActiveKey: boolean }> {
    const pending = events.map((event): Pending => {
      const bytes = signedBytesOf(toolset, event);
      const ts = event.ts === undefined ? now : new Date(event.ts);
      return { event, bytes, eventHash: sha256Hex(bytes), ts, attestationId: randomUUID() };
    });
    const admission = await provenance.admissionOf(toolset);
    const decisions = await decideAll(pending, admission.keys, admission.requireSigned);
    const again = pending.flatMap((_, i) => (needsFreshKeys(decisions[i]!) ? [i] : []));
    if (again.length > 0) {
      const fresh = await decideAll(again.map((i) => pending[i]!), await provenance.verifyingKeys(toolset, true), admission.requireSigned);
      again.forEach((i, k) => (decisions[i] = fresh[k]!));
    }
    return { judged: pending.map((p, i) => ({ ...p, decision: decisions[i]! })), hasActiveKey: admission.keys.some((k) => k.retiredAt === null) };
  }

  return {
    /**
     * Admits, attests and stores a batch (spec D4) for `caller` (null: an internal caller, bound to
     * no toolset). Repeats of an id (earlier or within the batch) are duplicates: nothing new is
     * stored or attested. Every other event gets one attestation row, committed with the events
     * admitted. A batch with an event that cannot be canonicalised or stored is refused whole.
     */
    async ingest(body: EmpireIngestBody, caller: Principal | null): Promise<EmpireIngestOutcome> {
      const now = clock.now();
      const { toolset } = body;
      assertToolsetInReach(caller, toolset, 'write events for');
      checkEvents(body.events, now);
      const firstOfId = new Map<string, EmpireEvent>();
      for (const event of body.events) if (!firstOfId.has(event.id)) firstOfId.set(event.id, event);
      const { judged, hasActiveKey } = await judge(toolset, [...firstOfId.values()], now);

      const rows: repo.EventRow[] = [];
      for (const j of judged) {
        if (!j.decision.admitted) continue;
        rows.push({
          eventId: randomUUID(),
          toolset,
          senderId: j.event.id,
          eventType: j.event.eventType,
          ts: j.ts,
          tenant: j.event.tenant ?? null,
          causedBy: j.event.causedBy ?? null,
          payload: j.event.payload ?? {},
          eventHash: j.eventHash,
          keyId: j.decision.keyId,
          compatMode: j.decision.compatMode,
          schemaVersion: EMPIRE_SCHEMA_VERSION,
          receivedAt: now,
          bodyBytes: j.bytes.length,
          signedMembers: signedMembersOf(j.event),
          tsSent: sentSpelling(j.event.ts, j.ts),
          attestationId: j.attestationId,
        });
      }
      const attestation = (j: Judged): AttestationRow => ({
        id: j.attestationId,
        toolset,
        source: ATTESTATION_SOURCE,
        sourceId: j.event.id,
        kind: j.event.eventType,
        eventHash: j.eventHash,
        signatureB64: j.event.signatureB64 ?? null,
        toolsetKeyId: j.decision.keyId,
        attestedAt: j.decision.admitted && !j.decision.compatMode ? now : null,
        acceptedAt: now,
        compatMode: j.decision.compatMode,
        rejectionReason: j.decision.rejectionReason,
      });

      const { stored, earlier } = await withTransaction(db, async (tx) => {
        const stored = await repo.insertNewEvents(tx, rows);
        await provenance.recordAttestations(tx, judged.filter((j) => !j.decision.admitted || stored.has(j.event.id)).map(attestation));
        return { stored, earlier: rows.filter((r) => !stored.has(r.senderId)).map((r) => r.senderId) };
      });
      const earlierIds = await repo.eventIdsOf(db, toolset, earlier);
      const newIds = new Map(rows.filter((r) => stored.has(r.senderId)).map((r) => [r.senderId, r.eventId]));
      const byId = new Map(judged.map((j) => [j.event.id, j]));

      let accepted = 0;
      let duplicates = 0;
      let rejected = 0;
      const seen = new Set<string>();
      const results = body.events.map((event): EventResult => {
        const j = byId.get(event.id)!;
        const repeat = seen.has(event.id);
        seen.add(event.id);
        if (!j.decision.admitted) {
          rejected += 1;
          return { id: event.id, eventId: null, compatMode: false, rejectionReason: j.decision.rejectionReason };
        }
        const fresh = !repeat && newIds.has(event.id);
        if (fresh) accepted += 1;
        else duplicates += 1;
        return { id: event.id, eventId: newIds.get(event.id) ?? earlierIds.get(event.id) ?? null, compatMode: j.decision.compatMode, rejectionReason: null };
      });
      const compatWithKeys = hasActiveKey ? judged.filter((j) => j.decision.compatMode).length : 0;
      if (deps.metrics) {
        let unsigned = 0;
        for (const row of rows) if (row.compatMode && stored.has(row.senderId)) unsigned++;
        deps.metrics.empireEventsStored(toolset, stored.size - unsigned, unsigned);
        const refusedBy = new Map<RejectionReason, number>();
        for (const { decision } of judged) {
          if (decision.rejectionReason !== null) refusedBy.set(decision.rejectionReason, (refusedBy.get(decision.rejectionReason) ?? 0) + 1);
        }
        for (const [reason, count] of refusedBy) deps.metrics.empireEventsRejected(reason, count);
      }
      return { result: { accepted, duplicates, rejected, results }, compatWithKeys };
    },

    /** Buffers one request's outcome and latency for the empire SLO; never fails the caller. */
    recordSample: (sample: repo.SampleRow): void => samples.push(sample),
    flushSamples: samples.flush,
    close: () => samples.flush(),
    /** Deletes the SLO samples older than the retention (platform/db/retention.ts) at `now`. */
    pruneSamples: (now: Date) => repo.deleteSamplesBefore(db, new Date(now.getTime() - SLO_SAMPLE_RETENTION_MS)),
  };
}

export type EmpireIngest = ReturnType<typeof createEmpireIngest>;
