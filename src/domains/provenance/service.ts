import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { actorOf, type AuditLog, type CallContext } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/client.ts';
import { decodeTimeCursor, isUuid, pageOf } from '../../platform/db/paging.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { notFound } from '../../platform/errors.ts';
import type { RejectionReason, VerifyingKey } from './admission.ts';
import { parsePublicKey } from './ed25519.ts';
import * as repo from './repository.ts';

/** Toolset names (spec C, Limits): 3 to 128 characters, a letter first, then letters, digits and `-`. */
export const TOOLSET_PATTERN = '^[A-Za-z][A-Za-z0-9-]{2,127}$';
const TOOLSET = new RegExp(TOOLSET_PATTERN);
/** Whether `name` is a toolset name (TOOLSET_PATTERN). */
export const isToolsetName = (name: string): boolean => TOOLSET.test(name);
export const LIST_LIMIT_DEFAULT = 50;
export const LIST_LIMIT_MAX = 200;
/** How long ingest may verify with a toolset's keys as read before; a failed check reads them again. */
export const KEY_CACHE_MS = 1000;

export interface KeyView {
  id: string;
  toolset: string;
  publicKeyB64: string;
  status: 'active' | 'retired';
  ownerUserId: string | null;
  createdAt: string;
  retiredAt: string | null;
}

export interface AttestationView {
  id: string;
  toolset: string;
  source: string;
  sourceId: string;
  kind: string;
  eventHash: string;
  signatureB64: string | null;
  toolsetKeyId: string | null;
  attestedAt: string | null;
  acceptedAt: string;
  compatMode: boolean;
  rejectionReason: RejectionReason | null;
}

/** What register and retire answer: the key, or a refusal the endpoint sends as 400 `ok: false` (spec C). */
export type KeyOutcome = { ok: true; key: KeyView } | { ok: false; reason: string; human: string };

function toKeyView(row: repo.KeyRow): KeyView {
  return {
    id: row.id,
    toolset: row.toolset,
    publicKeyB64: row.publicKeyB64,
    status: row.status === 'retired' ? 'retired' : 'active',
    ownerUserId: row.ownerUserId,
    createdAt: row.createdAt.toISOString(),
    retiredAt: row.retiredAt?.toISOString() ?? null,
  };
}

function toAttestationView(row: repo.AttestationRow): AttestationView {
  return {
    ...row,
    rejectionReason: row.rejectionReason as RejectionReason | null,
    attestedAt: row.attestedAt?.toISOString() ?? null,
    acceptedAt: row.acceptedAt.toISOString(),
  };
}

export function createProvenanceService(deps: { db: Db; clock: Clock; audit: AuditLog }) {
  const { db, clock, audit } = deps;
  const keyCache = new LRUCache<string, VerifyingKey[]>({ max: 10_000, ttl: KEY_CACHE_MS });

  async function loadVerifyingKeys(toolset: string): Promise<VerifyingKey[]> {
    const keys: VerifyingKey[] = [];
    for (const row of await repo.keysOfToolset(db, toolset)) keys.push({ id: row.id, publicKeyB64: row.publicKeyB64, createdAt: row.createdAt, retiredAt: row.retiredAt });
    keyCache.set(toolset, keys);
    return keys;
  }

  return {
    /**
     * The keys ingest verifies a toolset's events with. `fresh` reads them again (a signature that
     * failed against the cached keys may be by a key registered on another instance).
     */
    async verifyingKeys(toolset: string, fresh = false): Promise<VerifyingKey[]> {
      return (!fresh && keyCache.get(toolset)) || loadVerifyingKeys(toolset);
    },

    /** Attestation rows by id (those that exist), as stored. */
    attestationsByIds: (ids: readonly string[]) => repo.attestationsByIds(db, ids),
    /** The admission attestation of an event stored before events kept their attestation's id. */
    admissionAttestationOf: (key: { toolset: string; source: string; sourceId: string; eventHash: string }) => repo.admissionAttestationOf(db, key),

    /** Records admission decisions; call inside the transaction that stores the admitted events. */
    recordAttestations: (tx: Db, rows: readonly repo.AttestationRow[]) => repo.insertAttestations(tx, rows),

    async register(ctx: CallContext, input: { toolset?: string | undefined; publicKeyB64?: string | undefined }): Promise<KeyOutcome> {
      const { toolset, publicKeyB64 } = input;
      if (toolset === undefined || !TOOLSET.test(toolset)) {
        return { ok: false, reason: 'invalid-toolset', human: 'toolset must be 3 to 128 characters: a letter, then letters, digits or -.' };
      }
      if (publicKeyB64 === undefined) return { ok: false, reason: 'invalid-public-key-encoding', human: 'publicKeyB64 is required.' };
      const parsed = parsePublicKey(publicKeyB64);
      if ('problem' in parsed) {
        const human = {
          'invalid-public-key-encoding': 'publicKeyB64 must be canonical RFC 4648 base64 (standard alphabet, padded, no whitespace).',
          'invalid-public-key-length': 'publicKeyB64 must decode to exactly 32 bytes (a raw Ed25519 public key).',
          'invalid-public-key': 'publicKeyB64 is not a usable Ed25519 public key.',
        }[parsed.problem];
        return { ok: false, reason: parsed.problem, human };
      }
      const outcome = await withTransaction(db, async (tx): Promise<KeyOutcome> => {
        if ((await repo.keysWithPublicKey(tx, toolset, publicKeyB64)).length > 0) {
          return { ok: false, reason: 'key-already-registered', human: `This public key is already registered for toolset ${toolset}.` };
        }
        const row: repo.KeyRow = {
          id: randomUUID(),
          toolset,
          publicKeyB64,
          status: 'active',
          ownerUserId: ctx.principal.userId,
          createdAt: clock.now(),
          retiredAt: null,
        };
        await repo.insertKey(tx, row);
        const key = toKeyView(row);
        await audit.record(tx, { verb: 'provenance.register', target: `provenance-key:${row.id}`, surface: 'api', actor: actorOf(ctx.principal), after: key, requestId: ctx.requestId });
        return { ok: true, key };
      });
      keyCache.delete(toolset);
      return outcome;
    },

    /** Retires a key; retiring a retired key answers it unchanged (and audits nothing). 404 for an unknown id. */
    async retire(ctx: CallContext, id: string): Promise<KeyOutcome> {
      if (!isUuid(id)) return { ok: false, reason: 'invalid-key-id', human: 'The key id must be a UUID.' };
      const outcome = await withTransaction(db, async (tx) => {
        const row = await repo.lockKey(tx, id);
        if (!row) throw notFound(`There is no provenance key ${id}.`);
        if (row.status === 'retired') return { row, changed: false };
        const retired = await repo.retireKey(tx, id, clock.now());
        await audit.record(tx, {
          verb: 'provenance.retire',
          target: `provenance-key:${id}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: toKeyView(row),
          after: toKeyView(retired),
          requestId: ctx.requestId,
        });
        return { row: retired, changed: true };
      });
      keyCache.delete(outcome.row.toolset);
      return { ok: true, key: toKeyView(outcome.row) };
    },

    async listKeys(input: { toolset?: string | undefined; status?: 'active' | 'retired' | undefined; cursor?: string | undefined; limit?: number | undefined }) {
      const limit = input.limit ?? LIST_LIMIT_DEFAULT;
      const rows = await repo.listKeys(db, { toolset: input.toolset, status: input.status, cursor: decodeTimeCursor(input.cursor), limit: limit + 1 });
      const { page, nextCursor } = pageOf(rows, limit, (r) => r.createdAt);
      return { keys: page.map(toKeyView), nextCursor };
    },

    async listAttestations(input: {
      toolset?: string | undefined;
      source?: string | undefined;
      compatMode?: 'true' | 'false' | undefined;
      rejected?: 'true' | 'false' | undefined;
      cursor?: string | undefined;
      limit?: number | undefined;
    }) {
      const limit = input.limit ?? LIST_LIMIT_DEFAULT;
      const rows = await repo.listAttestations(db, {
        toolset: input.toolset,
        source: input.source,
        compatMode: input.compatMode === undefined ? undefined : input.compatMode === 'true',
        rejected: input.rejected === undefined ? undefined : input.rejected === 'true',
        cursor: decodeTimeCursor(input.cursor),
        limit: limit + 1,
      });
      const { page, nextCursor } = pageOf(rows, limit, (r) => r.acceptedAt);
      return { attestations: page.map(toAttestationView), nextCursor };
    },
  };
}

export type ProvenanceService = ReturnType<typeof createProvenanceService>;
