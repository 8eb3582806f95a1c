import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { Principal } from '../http/registry.ts';
import { withTransaction } from '../db/transaction.ts';
import { entryHashOf, type FactKind, type FactSource } from './chain.ts';
import { appendLeaf, frontierFits } from './merkle.ts';
import * as repo from './repository.ts';

export type AuditSurface = 'api' | 'cli' | 'job' | 'startup';

export interface AuditActor {
  userId: string | null;
  username: string;
}

/** A state-changing service call: who asked, and the request it came in on (for the audit row). */
export interface CallContext {
  principal: Principal;
  requestId: string;
}

/** The audit actor of a caller. */
export function actorOf(principal: Principal): AuditActor {
  return { userId: principal.userId, username: principal.username };
}

export interface OperatorAuditEntry {
  verb: string;
  target: string;
  surface: AuditSurface;
  actor: AuditActor | null;
  before?: unknown;
  after?: unknown;
  requestId?: string | null;
}

export interface FactInput {
  source: FactSource;
  sourceId: string;
  kind: FactKind;
  actor: string | null;
  payload: unknown;
}

export interface AuditLog {
  /**
   * Writes an operator audit row and appends its fact to the chain. Call it inside the
   * transaction that makes the change, so the change and its record commit together.
   */
  record(tx: Db, entry: OperatorAuditEntry): Promise<{ id: string; seqNo: number }>;
  /** Appends one fact; strictly serial because it holds the head row's lock until commit. */
  appendFact(tx: Db, fact: FactInput): Promise<repo.AuditFactRow>;
}

export function createAuditLog({ clock }: { clock: Clock }): AuditLog {
  async function appendFact(tx: Db, input: FactInput): Promise<repo.AuditFactRow> {
    const head = await repo.lockChainHead(tx);
    const now = clock.now();
    const body = {
      seqNo: head.seqNo + 1,
      source: input.source,
      sourceId: input.sourceId,
      kind: input.kind,
      actor: input.actor,
      ts: now.toISOString(),
      // Round-trip through JSON so the hashed payload is exactly what jsonb will store and return.
      payload: JSON.parse(JSON.stringify(input.payload ?? null)) as unknown,
      prevHash: head.headHash,
    };
    const fact = { id: randomUUID(), ...body, entryHash: entryHashOf(body) };
    // The Merkle nodes grow with the chain once they cover it; until then (facts written before
    // the tree existed, or by an older instance) the catch-up below builds them in order. A head
    // row whose frontier was altered by hand leaves the tree alone rather than failing the append
    // (verify reports it as frontier-mismatch).
    const merkle =
      head.merkleSize === head.seqNo && frontierFits(head.merkleFrontier, head.merkleSize)
        ? { size: head.merkleSize + 1, ...appendLeaf(head.merkleFrontier, head.merkleSize, fact.entryHash) }
        : null;
    await repo.insertFactAndMoveHead(tx, fact, now, merkle);
    return fact;
  }

  return {
    appendFact,
    async record(tx, entry) {
      const id = randomUUID();
      const actorName = entry.actor?.username ?? null;
      const fact = await appendFact(tx, {
        source: 'OperatorAudit',
        sourceId: id,
        kind: 'operator',
        actor: actorName,
        payload: {
          verb: entry.verb,
          target: entry.target,
          surface: entry.surface,
          before: entry.before ?? null,
          after: entry.after ?? null,
        },
      });
      await repo.insertOperatorAudit(tx, {
        id,
        seqNo: fact.seqNo,
        ts: new Date(fact.ts),
        actorUserId: entry.actor?.userId ?? null,
        actor: actorName,
        surface: entry.surface,
        verb: entry.verb,
        target: entry.target,
        before: entry.before ?? null,
        after: entry.after ?? null,
        requestId: entry.requestId ?? null,
      });
      return { id, seqNo: fact.seqNo };
    },
  };
}

/** Facts the catch-up folds into the tree per transaction (appends wait at most one batch). */
export const MERKLE_CATCH_UP_BATCH = 5000;

/**
 * Builds the Merkle nodes of facts the tree does not cover yet (facts older than the tree, or
 * appended by an instance that does not maintain it), oldest first, `batchSize` facts per
 * transaction under the head lock, until it covers the chain. Safe to run on several instances at
 * once (each batch re-reads the head under the lock). Stops between batches once `signal` is
 * aborted. Returns the facts it added.
 */
export async function catchUpMerkleTree(db: Db, batchSize = MERKLE_CATCH_UP_BATCH, signal?: AbortSignal): Promise<number> {
  let added = 0;
  for (;;) {
    if (signal?.aborted) return added;
    const step = await withTransaction(db, async (tx) => {
      const head = await repo.lockChainHead(tx);
      if (head.merkleSize >= head.seqNo) return 0;
      const rows = await repo.entryHashesAfter(tx, head.merkleSize, head.seqNo, batchSize);
      let size = head.merkleSize;
      let frontier = head.merkleFrontier;
      if (!frontierFits(frontier, size)) throw new Error(`the audit head row's merkle_frontier does not describe a tree of ${size} facts (POST {v1}/audit/chain/verify)`);
      const completed = [];
      for (const row of rows) {
        if (row.seqNo !== size + 1) {
          throw new Error(`audit chain has no fact ${size + 1} (next is ${row.seqNo}); the Merkle tree cannot be built past it (POST {v1}/audit/chain/verify)`);
        }
        const next = appendLeaf(frontier, size, row.entryHash);
        frontier = next.frontier;
        completed.push(...next.completed);
        size += 1;
      }
      if (rows.length === 0) throw new Error(`audit chain has no fact ${size + 1} though its head is ${head.seqNo}`);
      await repo.insertMerkleNodes(tx, completed);
      await repo.setMerkleEdge(tx, size, frontier);
      return rows.length;
    });
    if (step === 0) return added;
    added += step;
  }
}

/** The newest operator audit row with `verb`, or null (an index read: operator_audit_verb_idx). */
export async function latestOperatorRecord(db: Db, verb: string): Promise<repo.OperatorAuditRow | null> {
  const [row] = await repo.listOperatorAudit(db, { limit: 1, verb });
  return row ?? null;
}

/** The chain head's seqNo (0 before the first fact). */
export const chainHeadSeqNo = (db: Db) => repo.chainHeadSeqNo(db);

/** How many operator audit rows were written at or after `since`. */
export const operatorRecordsSince = (db: Db, since: Date) => repo.countOperatorAuditSince(db, since);
