import { randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/client.ts';
import { decodeTimeCursor, isUuid, pageOf } from '../../platform/db/paging.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { notFound } from '../../platform/errors.ts';
import { assertToolsetInReach, toolsetReach, type ToolsetCaller } from '../../platform/http/auth.ts';
import { createClockCache } from '../../platform/memo.ts';
import { isToolsetName } from '../../platform/toolset-name.ts';
import type { RejectionReason, VerifyingKey } from './admission.ts';
import { parsePublicKey } from './ed25519.ts';
import * as repo from './repository.ts';

export const LIST_LIMIT_DEFAULT = 50;
export const LIST_LIMIT_MAX = 200;
/**
 * How long ingest may use a toolset's keys and policy as read before (per instance; this instance's
 * own register, retire and policy change clear it at once). A failed signature check reads the keys
 * again; a policy changed on another instance takes effect here within this bound.
 */
export const KEY_CACHE_MS = 1000;

/** What the admission of a toolset's events depends on besides the events themselves. */
export interface ToolsetAdmission {
  keys: VerifyingKey[];
  /** Effective: OBSERVATORY_REQUIRE_SIGNED_EVENTS, or the toolset's own policy. */
  requireSigned: boolean;
}

/** `svc-provenance-toolset-policy.v1` (docs/empire/README.md, "Signed-only toolsets"). */
export interface PolicyView {
  toolset: string;
  /** Effective: what ingest applies to the toolset's unsigned events now. */
  requireSigned: boolean;
  /** `global` when OBSERVATORY_REQUIRE_SIGNED_EVENTS is on or the toolset has no policy of its own. */
  source: 'toolset' | 'global';
  /** The toolset's own setting; null when it has none. */
  toolsetRequireSigned: boolean | null;
  updatedAt: string | null;
  updatedBy: string | null;
  activeKeys: number;
}

interface CachedAdmission {
  keys: VerifyingKey[];
  policy: repo.PolicyRow | null;
}

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

function toPolicyView(toolset: string, policy: repo.PolicyRow | null, requireSignedGlobally: boolean, activeKeys: number): PolicyView {
  const own = policy?.requireSigned ?? null;
  return {
    toolset,
    requireSigned: requireSignedGlobally || own === true,
    source: requireSignedGlobally || own === null ? 'global' : 'toolset',
    toolsetRequireSigned: own,
    updatedAt: policy?.updatedAt.toISOString() ?? null,
    updatedBy: policy?.updatedBy ?? null,
    activeKeys,
  };
}

/** The stored policy as audit rows show it before and after a change. */
const auditedPolicy = (row: repo.PolicyRow | null) => (row === null ? null : { ...row, updatedAt: row.updatedAt.toISOString() });

export function createProvenanceService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  /** OBSERVATORY_REQUIRE_SIGNED_EVENTS: every toolset is signed-only, whatever its own policy. */
  requireSignedGlobally: boolean;
}) {
  const { db, clock, audit } = deps;
  // Keys and policy are read together: ingest needs both for every batch, and one cache entry
  // keeps them from disagreeing about when they were read. Aged by the service clock.
  const admissionCache = createClockCache<string, CachedAdmission>({ max: 10_000, ttlMs: KEY_CACHE_MS, clock });

  async function loadAdmission(toolset: string): Promise<CachedAdmission> {
    const [rows, policy] = await Promise.all([repo.keysOfToolset(db, toolset), repo.policyOf(db, toolset)]);
    const keys = rows.map((row): VerifyingKey => ({ id: row.id, publicKeyB64: row.publicKeyB64, createdAt: row.createdAt, retiredAt: row.retiredAt }));
    const entry = { keys, policy };
    admissionCache.set(toolset, entry);
    return entry;
  }

  const cachedAdmission = async (toolset: string, fresh: boolean) => (!fresh && admissionCache.get(toolset)) || loadAdmission(toolset);

  async function policyNow(toolset: string): Promise<PolicyView> {
    const { keys, policy } = await loadAdmission(toolset);
    return toPolicyView(toolset, policy, deps.requireSignedGlobally, keys.filter((k) => k.retiredAt === null).length);
  }

  /**
   * The toolset's policy row, locked until the transaction ends; null when there was none and
   * `row` has been inserted as its first (so two first writes cannot both audit a `before` of null).
   */
  async function lockOrInsertPolicy(tx: Db, row: repo.PolicyRow): Promise<repo.PolicyRow | null> {
    const existing = await repo.lockPolicy(tx, row.toolset);
    if (existing !== null || (await repo.insertPolicyIfAbsent(tx, row))) return existing;
    // A concurrent request inserted the first row; the insert waited for its commit, so lock that.
    return repo.lockPolicy(tx, row.toolset);
  }

  const recordPolicyChange = (tx: Db, ctx: CallContext, before: repo.PolicyRow | null, after: repo.PolicyRow) =>
    audit.record(tx, {
      verb: 'provenance.policy',
      target: `toolset-policy:${after.toolset}`,
      surface: 'api',
      actor: actorOf(ctx.principal),
      before: auditedPolicy(before),
      after: auditedPolicy(after),
      requestId: ctx.requestId,
    });

  return {
    /** Whether every toolset with an active key refuses unsigned events (the compliance predicate signed-events-required). */
    async signingCoverage(listedMax: number) {
      const coverage = await repo.signingCoverage(db, listedMax);
      return { requireSignedGlobally: deps.requireSignedGlobally, ...coverage };
    },
    /**
     * The keys and the effective signing rule ingest admits a toolset's events with, read at most
     * KEY_CACHE_MS before. `fresh` reads them again (a signature that failed against the cached
     * keys may be by a key registered on another instance).
     */
    async admissionOf(toolset: string, fresh = false): Promise<ToolsetAdmission> {
      const { keys, policy } = await cachedAdmission(toolset, fresh);
      return { keys, requireSigned: deps.requireSignedGlobally || policy?.requireSigned === true };
    },
    /** The keys ingest verifies a toolset's events with (as admissionOf). */
    async verifyingKeys(toolset: string, fresh = false): Promise<VerifyingKey[]> {
      return (await cachedAdmission(toolset, fresh)).keys;
    },
    /** The toolset's signing policy as it stands now (read afresh, not from the ingest's cache). */
    policy: policyNow,
    /** `policy` for a caller: a toolset out of its reach is 403. */
    async readPolicy(toolset: string, caller: ToolsetCaller): Promise<PolicyView> {
      assertToolsetInReach(caller, toolset, 'read the signing policy of');
      return policyNow(toolset);
    },
    /**
     * Sets whether the toolset's unsigned events are refused. Setting the value it has changes and
     * audits nothing; a change is audited as `provenance.policy` with the row before and after.
     */
    async setPolicy(ctx: CallContext, toolset: string, requireSigned: boolean): Promise<PolicyView> {
      assertToolsetInReach(ctx.principal, toolset, 'change the signing policy of');
      const row: repo.PolicyRow = { toolset, requireSigned, updatedBy: ctx.principal.username, updatedAt: clock.now() };
      await withTransaction(db, async (tx) => {
        const before = await lockOrInsertPolicy(tx, row);
        if (before !== null && before.requireSigned === requireSigned) return;
        if (before !== null) await repo.updatePolicy(tx, row);
        await recordPolicyChange(tx, ctx, before, row);
      });
      admissionCache.delete(toolset);
      return policyNow(toolset);
    },

    /** Attestation rows by id (those that exist), as stored. */
    attestationsByIds: (ids: readonly string[]) => repo.attestationsByIds(db, ids),
    /** The admission attestation of an event stored before events kept their attestation's id. */
    admissionAttestationOf: (key: { toolset: string; source: string; sourceId: string; eventHash: string }) => repo.admissionAttestationOf(db, key),

    /** Records admission decisions; call inside the transaction that stores the admitted events. */
    recordAttestations: (tx: Db, rows: readonly repo.AttestationRow[]) => repo.insertAttestations(tx, rows),

    async register(ctx: CallContext, input: { toolset?: string | undefined; publicKeyB64?: string | undefined }): Promise<KeyOutcome> {
      const { toolset, publicKeyB64 } = input;
      if (toolset === undefined || !isToolsetName(toolset)) {
        return { ok: false, reason: 'invalid-toolset', human: 'toolset must be 3 to 128 characters: a letter, then letters, digits or -.' };
      }
      assertToolsetInReach(ctx.principal, toolset, 'register keys for');
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
      admissionCache.delete(toolset);
      return outcome;
    },

    /** Retires a key; retiring a retired key answers it unchanged (and audits nothing). 404 for an unknown id. */
    async retire(ctx: CallContext, id: string): Promise<KeyOutcome> {
      if (!isUuid(id)) return { ok: false, reason: 'invalid-key-id', human: 'The key id must be a UUID.' };
      const outcome = await withTransaction(db, async (tx) => {
        const row = await repo.lockKey(tx, id);
        if (!row) throw notFound(`There is no provenance key ${id}.`);
        assertToolsetInReach(ctx.principal, row.toolset, 'retire keys of');
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
      admissionCache.delete(outcome.row.toolset);
      return { ok: true, key: toKeyView(outcome.row) };
    },

    /** Newest first; a caller bound to toolsets lists only theirs (a `toolset` filter outside them is 403). */
    async listKeys(
      input: { toolset?: string | undefined; status?: 'active' | 'retired' | undefined; cursor?: string | undefined; limit?: number | undefined },
      caller: ToolsetCaller,
    ) {
      if (input.toolset !== undefined) assertToolsetInReach(caller, input.toolset, 'read the keys of');
      const limit = input.limit ?? LIST_LIMIT_DEFAULT;
      const rows = await repo.listKeys(db, { toolset: input.toolset, status: input.status, reach: toolsetReach(caller), cursor: decodeTimeCursor(input.cursor), limit: limit + 1 });
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
    }, caller: ToolsetCaller) {
      if (input.toolset !== undefined) assertToolsetInReach(caller, input.toolset, 'read the attestations of');
      const limit = input.limit ?? LIST_LIMIT_DEFAULT;
      const rows = await repo.listAttestations(db, {
        toolset: input.toolset,
        reach: toolsetReach(caller),
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
