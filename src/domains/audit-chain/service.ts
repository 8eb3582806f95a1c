import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { entryHashOf, type FactBody, type FactKind, type FactSource, GENESIS_HASH } from '../../platform/audit/chain.ts';
import {
  appendLeaf,
  type Frontier,
  foldPath,
  frontierRoot,
  inclusionPath,
  nodeKey,
  type NodeRef,
  proofNodeRefs,
  rangeHash,
  type Side,
} from '../../platform/audit/merkle.ts';
import { actorOf, type AuditLog, type CallContext, catchUpMerkleTree } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/client.ts';
import { isUuid } from '../../platform/db/paging.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import * as repo from './repository.ts';

/** The audit chain's own endpoints (spec B group 5, `audit/chain*`; docs/audit-chain/README.md). */

export const LIST_LIMIT_DEFAULT = 100;
export const LIST_LIMIT_MAX = 500;
/** Facts the verify walk reads per statement: memory stays bounded whatever the chain's length. */
export const VERIFY_BATCH = 2000;
/** `{id}` of GET {v1}/audit/chain/{id}: a fact's uuid or its decimal seqNo. */
export const FACT_ID_PATTERN = '^(?:[0-9]{1,18}|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})$';

export type DivergenceReason = 'prev-mismatch' | 'entry-mismatch';
export type MerkleDivergenceReason = 'node-mismatch' | 'node-missing' | 'frontier-mismatch';

export interface HeadView {
  seqNo: string;
  headHash: string;
  observedAt: string;
}

export interface ProofView {
  leafIndex: number;
  leafCount: number;
  leafHash: string;
  rootHash: string;
  siblings: { hash: string; side: Side }[];
}

export interface VerifyResult {
  intact: boolean;
  walkedCount: number;
  divergence: { seqNo: string; reason: DivergenceReason } | null;
  head: HeadView | null;
  merkle: {
    intact: boolean;
    checkedLeaves: number;
    divergence: { level: number; index: number; reason: MerkleDivergenceReason } | null;
  };
  durationMs: number;
}

function summaryView(row: repo.FactSummaryRow) {
  return {
    id: row.id,
    seqNo: String(row.seqNo),
    // Only the append writes these columns, from the two lists.
    source: row.source as FactSource,
    sourceId: row.sourceId,
    kind: row.kind as FactKind,
    actor: row.actor,
    ts: row.ts,
    prevHash: row.prevHash,
    entryHash: row.entryHash,
  };
}

function factView(row: repo.FactRow) {
  return { ...summaryView(row), payload: row.payload ?? null };
}

/** An ISO 8601 time from a query, as the stored text form; the schema has checked its format. */
function isoQuery(value: string | undefined, field: string): string | undefined {
  if (value === undefined) return undefined;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw badRequest('invalid-query', `query.${field} must be an ISO 8601 date-time with a time zone.`, { field: `query.${field}` });
  return at.toISOString();
}

/** A frontier as compared: no trailing empty slots. */
function trimmed(frontier: Frontier): Frontier {
  const out = [...frontier];
  while (out.length > 0 && !out.at(-1)) out.pop();
  return out.map((part) => part ?? null);
}

export interface AuditChainService {
  list(query: { actor?: string | undefined; kind?: string | undefined; source?: string | undefined; since?: string | undefined; until?: string | undefined; cursor?: string | undefined; limit?: number | undefined }): Promise<{
    facts: ReturnType<typeof summaryView>[];
    head: HeadView | null;
    nextCursor: string | null;
  }>;
  get(id: string): Promise<{ fact: ReturnType<typeof factView>; head: HeadView; proof: ProofView }>;
  verify(ctx: CallContext): Promise<VerifyResult>;
  /** Builds the Merkle nodes of facts the tree does not cover yet (start-up, and lazily). */
  catchUp(signal?: AbortSignal): Promise<number>;
}

export function createAuditChainService(deps: { db: Db; clock: Clock; audit: AuditLog; log?: FastifyBaseLogger }): AuditChainService {
  const { db, clock, audit } = deps;

  const headView = (head: { seqNo: number; headHash: string }): HeadView | null =>
    head.seqNo === 0 ? null : { seqNo: String(head.seqNo), headHash: head.headHash, observedAt: clock.now().toISOString() };

  /** One catch-up at a time per instance; callers arriving meanwhile wait for it. */
  let running: Promise<number> | null = null;
  function catchUp(signal?: AbortSignal): Promise<number> {
    running ??= catchUpMerkleTree(db, undefined, signal).finally(() => {
      running = null;
    });
    return running;
  }

  return {
    catchUp,

    async list(query) {
      const since = isoQuery(query.since, 'since');
      const until = isoQuery(query.until, 'until');
      if (since !== undefined && until !== undefined && until <= since) {
        throw badRequest('invalid-query', 'query.until must be later than query.since (since is inclusive, until exclusive).', { field: 'query.until' });
      }
      const limit = query.limit ?? LIST_LIMIT_DEFAULT;
      const [rows, head] = await Promise.all([
        repo.listFacts(db, {
          actor: query.actor,
          kind: query.kind,
          source: query.source,
          since,
          until,
          beforeSeqNo: query.cursor === undefined ? undefined : Number(query.cursor),
          limit: limit + 1,
        }),
        repo.readHead(db),
      ]);
      const page = rows.slice(0, limit);
      return {
        facts: page.map(summaryView),
        head: headView(head),
        nextCursor: rows.length > limit && page.length > 0 ? String(page.at(-1)!.seqNo) : null,
      };
    },

    async get(id) {
      let by: { id: string } | { seqNo: number };
      if (isUuid(id)) by = { id: id.toLowerCase() };
      else if (/^[0-9]{1,18}$/.test(id) && Number.isSafeInteger(Number(id))) by = { seqNo: Number(id) };
      else throw badRequest('invalid-params', 'path.id must be an audit fact id (uuid) or a decimal seqNo.', { field: 'path.id' });

      const read = async () => {
        const found = await repo.factWithHead(db, by);
        if (!found.fact) throw notFound(`No audit fact ${'id' in by ? by.id : `with seqNo ${by.seqNo}`}.`);
        return { head: found.head, fact: found.fact };
      };
      let { head, fact } = await read();
      if (fact.seqNo > head.merkleSize) {
        // Facts the tree does not cover yet (written before it existed): build it, then read again.
        await catchUp();
        ({ head, fact } = await read());
        if (fact.seqNo > head.merkleSize) throw new Error(`the audit Merkle tree covers ${head.merkleSize} facts, not fact ${fact.seqNo}`);
      }

      // The tree is the one the head row's merkle edge describes; the nodes under it never change,
      // so reading them after the head is consistent with it.
      const leafCount = head.merkleSize;
      const leafIndex = fact.seqNo - 1;
      const refs = proofNodeRefs(leafIndex, leafCount);
      const nodes = await repo.readNodes(db, refs);
      const lookup = (ref: NodeRef): string => {
        const hash = nodes.get(nodeKey(ref));
        if (hash === undefined) throw new Error(`audit Merkle node ${nodeKey(ref)} is missing (POST {v1}/audit/chain/verify)`);
        return hash;
      };
      const siblings = inclusionPath(leafIndex, leafCount).map((step) => ({ hash: rangeHash(step.start, step.end, lookup), side: step.side }));
      const rootHash = frontierRoot(head.merkleFrontier) ?? '';
      if (foldPath(fact.entryHash, siblings) !== rootHash) {
        deps.log?.warn({ seqNo: fact.seqNo, leafCount }, 'audit proof does not fold to the stored root: the Merkle nodes or the head row were changed (POST {v1}/audit/chain/verify)');
      }
      return {
        fact: factView(fact),
        head: headView(head)!,
        proof: { leafIndex, leafCount, leafHash: fact.entryHash, rootHash, siblings },
      };
    },

    async verify(ctx) {
      const started = performance.now();
      try {
        await catchUp();
      } catch (error) {
        // A chain with a hole cannot be folded past it; the walk below says where the hole is.
        deps.log?.warn({ err: error }, 'audit Merkle catch-up stopped');
      }
      const head = await repo.readHead(db);
      const observed = headView(head);

      let divergence: VerifyResult['divergence'] = null;
      let merkleDivergence: VerifyResult['merkle']['divergence'] = null;
      let walked = 0;
      let expectedSeq = 1;
      let expectedPrev = GENESIS_HASH;
      let lastSeq = 0;
      let lastHash = GENESIS_HASH;
      // The tree recomputed from the stored entry hashes, compared with the stored nodes as it grows.
      let size = 0;
      let frontier: Frontier = [];

      // Each batch's facts and the stored nodes its leaves complete are read together, and the next
      // batch is read while this one is hashed.
      const fetchBatch = (after: number) => {
        const coveredEnd = Math.min(after + VERIFY_BATCH, head.seqNo, head.merkleSize);
        return Promise.all([
          repo.factsAscending(db, after, head.seqNo, VERIFY_BATCH),
          coveredEnd > after ? repo.nodesCompletedBy(db, after, coveredEnd) : Promise.resolve(new Map<string, string>()),
        ]);
      };
      let pending = head.seqNo > 0 ? fetchBatch(0) : null;
      while (pending) {
        const [rows, stored] = await pending;
        if (rows.length === 0) break;
        const batchEnd = rows.at(-1)!.seqNo;
        pending = batchEnd < head.seqNo ? fetchBatch(batchEnd) : null;
        for (const row of rows) {
          walked += 1;
          if (divergence === null) {
            if (row.seqNo !== expectedSeq || row.prevHash !== expectedPrev) divergence = { seqNo: String(row.seqNo), reason: 'prev-mismatch' };
            else if (entryHashOf(row as FactBody) !== row.entryHash) divergence = { seqNo: String(row.seqNo), reason: 'entry-mismatch' };
          }
          expectedSeq = row.seqNo + 1;
          expectedPrev = row.entryHash;
          lastSeq = row.seqNo;
          lastHash = row.entryHash;

          if (merkleDivergence === null && row.seqNo <= head.merkleSize) {
            // A hole in the chain shifts every later leaf: the tree is checked up to it.
            if (row.seqNo !== size + 1) {
              merkleDivergence = { level: 0, index: size, reason: 'node-missing' };
              continue;
            }
            const next = appendLeaf(frontier, size, row.entryHash);
            for (const node of next.completed) {
              const found: string | undefined = stored.get(nodeKey(node));
              if (found !== node.hash) {
                merkleDivergence = { level: node.level, index: node.index, reason: found === undefined ? 'node-missing' : 'node-mismatch' };
                break;
              }
            }
            frontier = next.frontier;
            size += 1;
          }
        }
      }

      // The head row is the prevHash the next fact will carry: it must be the last fact's entryHash.
      if (divergence === null && (lastSeq !== head.seqNo || lastHash !== head.headHash)) {
        divergence = { seqNo: String(lastSeq + 1), reason: 'prev-mismatch' };
      }
      if (merkleDivergence === null && size < head.merkleSize) merkleDivergence = { level: 0, index: size, reason: 'node-missing' };
      if (merkleDivergence === null) {
        const want = trimmed(frontier);
        const have: Frontier = Array.isArray(head.merkleFrontier) ? trimmed(head.merkleFrontier) : ['(not an array)'];
        const length = Math.max(want.length, have.length);
        for (let level = 0; level < length; level++) {
          if ((want[level] ?? null) !== (have[level] ?? null)) {
            merkleDivergence = { level, index: Math.max(0, Math.floor(size / 2 ** level) - 1), reason: 'frontier-mismatch' };
            break;
          }
        }
      }

      const result: VerifyResult = {
        intact: divergence === null,
        walkedCount: walked,
        divergence,
        head: observed,
        merkle: { intact: merkleDivergence === null, checkedLeaves: size, divergence: merkleDivergence },
        durationMs: Math.round(performance.now() - started),
      };
      // Written after the walk, so the walk's own fact is not part of what it verified.
      await withTransaction(db, (tx) =>
        audit.record(tx, {
          verb: 'audit.verify-chain',
          target: 'audit-chain',
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: null,
          after: {
            intact: result.intact,
            walkedCount: result.walkedCount,
            divergence: result.divergence,
            headSeqNo: observed?.seqNo ?? null,
            headHash: observed?.headHash ?? null,
            merkle: result.merkle,
          },
          requestId: ctx.requestId,
        }),
      );
      return result;
    },
  };
}
