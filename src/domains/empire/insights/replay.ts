import { sha256Hex } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/db/client.ts';
import { isUuid } from '../../../platform/db/paging.ts';
import { verifyEd25519 } from '../../../platform/ed25519-pool.ts';
import { assertThat, badRequest, notFound } from '../../../platform/errors.ts';
import { assertToolsetInReach, type ToolsetCaller } from '../../../platform/http/auth.ts';
import { type AttestationRow, candidateKeys, decideAdmission, type ProvenanceService, type VerifyingKey } from '../../provenance/index.ts';
import { ATTESTATION_SOURCE, EMPIRE_SCHEMA_VERSION, type EmpireEvent, SIGNED_MEMBER, signedBytesOf } from '../ingest/service.ts';
import * as repo from './repository.ts';

/**
 * Replay of stored empire events (spec B group 2 `{v1}/empire/{toolset}/replay`, C Events 3):
 * the signed bytes are rebuilt from the stored row, and what ingest derived from them is derived
 * again and compared (docs/empire/README.md, "Replay").
 */

/** The fields replay derives again, in this order. */
export const REPLAYED_FIELDS = ['schemaVersion', 'eventHash', 'attestedEventHash', 'bodyBytes', 'admission'] as const;
export type ReplayedField = (typeof REPLAYED_FIELDS)[number];
export const REPLAY_LIST_DEFAULT = 20;
export const REPLAY_LIST_MAX = 200;

export interface ReplayDifference {
  field: ReplayedField;
  stored: string | null;
  replayed: string | null;
}

/** The event as its sender signed it, with the optional members `signedMembers` says it sent. */
export function signedEventOf(row: repo.StoredEmpireEvent, signedMembers: number): EmpireEvent {
  const event: EmpireEvent = { id: row.senderId, eventType: row.eventType };
  if (signedMembers & SIGNED_MEMBER.ts) event.ts = row.tsSent ?? row.ts.toISOString();
  if (row.tenant !== null) event.tenant = row.tenant;
  if (signedMembers & SIGNED_MEMBER.causedBy) event.causedBy = row.causedBy;
  if (signedMembers & SIGNED_MEMBER.payload) event.payload = row.payload;
  return event;
}

/**
 * The signed bytes of a stored row. A row stored before events kept `signedMembers` is tried in
 * every shape its columns allow, and the one that hashes to the stored hash is taken (else the
 * fullest shape, so the difference shows).
 */
export function rebuildSignedBytes(row: repo.StoredEmpireEvent): Buffer {
  if (row.signedMembers !== null) return signedBytesOf(row.toolset, signedEventOf(row, row.signedMembers));
  const all = SIGNED_MEMBER.ts | SIGNED_MEMBER.causedBy | SIGNED_MEMBER.payload;
  for (let members = all; members >= 0; members--) {
    if (row.causedBy !== null && !(members & SIGNED_MEMBER.causedBy)) continue;
    const bytes = signedBytesOf(row.toolset, signedEventOf(row, members));
    if (sha256Hex(bytes) === row.eventHash) return bytes;
  }
  return signedBytesOf(row.toolset, signedEventOf(row, all));
}

/** How an admission reads in a replay: `compat`, `signed:<keyId>` or `rejected:<reason>`. */
function admissionText(d: { admitted: boolean; compatMode: boolean; keyId: string | null; rejectionReason: string | null }): string {
  if (!d.admitted) return `rejected:${d.rejectionReason}`;
  return d.compatMode ? 'compat' : `signed:${d.keyId}`;
}

/**
 * Compares a stored row with what its rebuilt bytes give today: the hash, the hash its admission
 * attested, the byte count, and the admission decided again under the toolset's keys and the
 * signing rule now in force. `attestation` null means none was found (reported, not guessed).
 */
export function replayEvent(
  row: repo.StoredEmpireEvent,
  attestation: AttestationRow | null,
  keys: readonly VerifyingKey[],
  requireSigned: boolean,
): { matches: boolean; fields: ReplayDifference[] } {
  const bytes = rebuildSignedBytes(row);
  const hash = sha256Hex(bytes);
  const signatureB64 = attestation?.signatureB64 ?? undefined;
  let replayedAdmission: string;
  if (attestation === null && !row.compatMode) {
    replayedAdmission = 'unknown:no-attestation';
  } else {
    const signed = { signatureB64, ...(row.keyId === null ? {} : { keyId: row.keyId }) };
    // The stored key is the one to try first; a key registered later cannot have signed it.
    const candidates = candidateKeys(signed, keys);
    const verified = candidates.map((k) => verifyEd25519({ publicKeyB64: k.publicKeyB64, message: bytes, signatureB64: signatureB64! }));
    replayedAdmission = admissionText(decideAdmission({ ts: row.ts, signatureB64 }, candidates, verified, requireSigned));
  }
  const compared: Record<ReplayedField, [string | null, string | null]> = {
    schemaVersion: [String(row.schemaVersion), String(EMPIRE_SCHEMA_VERSION)],
    eventHash: [row.eventHash, hash],
    attestedEventHash: [attestation?.eventHash ?? null, attestation === null ? null : hash],
    bodyBytes: [String(row.bodyBytes), String(bytes.length)],
    admission: [admissionText({ admitted: true, compatMode: row.compatMode, keyId: row.keyId, rejectionReason: null }), replayedAdmission],
  };
  const fields = REPLAYED_FIELDS.filter((f) => compared[f][0] !== compared[f][1]).map((f) => ({ field: f, stored: compared[f][0], replayed: compared[f][1] }));
  return { fields, matches: fields.length === 0 };
}

export function envelopeOf(row: repo.StoredEmpireEvent) {
  return {
    schemaVersion: row.schemaVersion,
    receivedAt: row.receivedAt.toISOString(),
    sourceTenant: row.tenant,
    bodyBytes: row.bodyBytes,
    eventType: row.eventType,
    causedBy: row.causedBy,
  };
}

export function createReplayService(deps: { db: Db; provenance: ProvenanceService }) {
  const { db, provenance } = deps;

  /** The admission attestations of stored rows, by event id (absent when none is found). */
  async function attestationsOf(rows: readonly repo.StoredEmpireEvent[]): Promise<Map<string, AttestationRow>> {
    const ids = rows.map((r) => r.attestationId).filter((id): id is string => id !== null);
    const byId = new Map((await provenance.attestationsByIds(ids)).map((a) => [a.id, a]));
    const found = new Map<string, AttestationRow>();
    for (const row of rows) {
      const attestation =
        row.attestationId !== null
          ? byId.get(row.attestationId)
          : await provenance.admissionAttestationOf({ toolset: row.toolset, source: ATTESTATION_SOURCE, sourceId: row.senderId, eventHash: row.eventHash });
      if (attestation) found.set(row.eventId, attestation);
    }
    return found;
  }

  async function replayRows(toolset: string, rows: readonly repo.StoredEmpireEvent[]) {
    // Today's rule: the global flag or the toolset's own signed-only policy, as ingest applies them.
    const [attestations, admission] = await Promise.all([attestationsOf(rows), provenance.admissionOf(toolset, true)]);
    return rows.map((row) => ({ row, ...replayEvent(row, attestations.get(row.eventId) ?? null, admission.keys, admission.requireSigned) }));
  }

  return {
    /**
     * What the drift inbox's replay-drift detector reads: the `perToolset` most recently received
     * events of each of at most `toolsetsMax` toolsets (by name), plus the events named in
     * `recheck` (events an open drift event names, which may have left that window), replayed as
     * the replay endpoint does; answers those that do not replay clean.
     */
    async mismatches(options: { toolsetsMax: number; perToolset: number; recheck: readonly { toolset: string; eventId: string }[]; now: Date }) {
      const all = await repo.toolsetsWithLastEvent(db, options.now);
      const toolsets = all.slice(0, options.toolsetsMax).map((t) => t.toolset);
      const found = new Map<string, { toolset: string; eventId: string; senderId: string; fields: ReplayDifference[] }>();
      const take = (toolset: string, replayed: Awaited<ReturnType<typeof replayRows>>) => {
        for (const r of replayed) if (!r.matches) found.set(`${toolset}:${r.row.eventId}`, { toolset, eventId: r.row.eventId, senderId: r.row.senderId, fields: r.fields });
      };
      let replayedCount = 0;
      for (const toolset of toolsets) {
        const rows = await repo.recentEvents(db, toolset, options.perToolset);
        replayedCount += rows.length;
        take(toolset, await replayRows(toolset, rows));
      }
      for (const ref of options.recheck) {
        if (!isUuid(ref.eventId)) continue;
        const row = await repo.storedEvent(db, ref.toolset, ref.eventId, true);
        if (row === null) continue; // gone: nothing stored is left to disagree
        replayedCount++;
        take(ref.toolset, await replayRows(ref.toolset, [row]));
      }
      return { toolsetsScanned: toolsets.length, toolsetsSkipped: all.length - toolsets.length, replayed: replayedCount, mismatches: [...found.values()] };
    },

    /**
     * `eventId` (our UUID, or the toolset's own id) replays one event; without it (or with
     * `list=1`) the most recent events are listed with their envelopes and whether each replays clean.
     */
    async replay(
      toolset: string,
      query: { eventId?: string | undefined; list?: '0' | '1' | undefined; limit?: number | undefined },
      caller: ToolsetCaller,
    ) {
      assertToolsetInReach(caller, toolset, 'replay the events of');
      const compared = [...REPLAYED_FIELDS];
      if (query.list === '1' && query.eventId !== undefined) {
        throw badRequest('invalid-query', 'Give eventId to replay one event, or list=1 to list recent envelopes, not both.', { field: 'query.list' });
      }
      if (query.eventId === undefined) {
        const rows = await repo.recentEvents(db, toolset, query.limit ?? REPLAY_LIST_DEFAULT);
        const replayed = await replayRows(toolset, rows);
        return {
          mode: 'list' as const,
          toolset,
          eventId: null,
          id: null,
          matches: replayed.every((r) => r.matches),
          compared,
          fields: [],
          envelope: null,
          envelopes: replayed.map(({ row, matches, fields }) => ({
            eventId: row.eventId,
            id: row.senderId,
            ...envelopeOf(row),
            matches,
            differingFields: fields.map((f) => f.field),
          })),
        };
      }
      const row = await repo.storedEvent(db, toolset, query.eventId, isUuid(query.eventId));
      assertThat(row, notFound(`Toolset ${toolset} has no stored event ${query.eventId}.`));
      const [replayed] = await replayRows(toolset, [row]);
      return {
        mode: 'event' as const,
        toolset,
        eventId: row.eventId,
        id: row.senderId,
        matches: replayed!.matches,
        compared,
        fields: replayed!.fields,
        envelope: envelopeOf(row),
        envelopes: null,
      };
    },
  };
}

export type ReplayService = ReturnType<typeof createReplayService>;
