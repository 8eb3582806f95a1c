import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { Principal } from '../http/registry.ts';
import { entryHashOf, type FactKind, type FactSource } from './chain.ts';
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
    await repo.insertFactAndMoveHead(tx, fact, now);
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
