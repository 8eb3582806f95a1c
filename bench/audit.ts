import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { entryHashOf, type FactKind, type FactSource } from '../src/platform/audit/chain.ts';
import { auditFacts } from '../src/platform/audit/schema.ts';
import { catchUpMerkleTree } from '../src/platform/audit/service.ts';
import { rowsOf } from '../src/platform/db/client.ts';
import { insertRows } from '../src/platform/db/prepared.ts';
import { withTransaction } from '../src/platform/db/transaction.ts';
import { createAuditChainService } from '../src/domains/audit-chain/service.ts';
import { systemClock } from '../src/platform/clock.ts';
import { LONG_WORK_TIMEOUT_MS, type Principal, V1 } from '../src/platform/http/registry.ts';
import type { BenchContext, Scenario } from './scenarios.ts';

/**
 * The audit chain (docs/audit-chain/README.md, "Performance"): a fact with its inclusion proof at 10,000 and at
 * 1,000,000 facts (the target: p95 at 1M at most twice p95 at 10k), and one verify walk over the
 * whole chain (facts per second, peak heap growth).
 *
 * The chain is seeded straight into the database: valid facts (each entryHash computed as the
 * append computes it, each prevHash the previous entryHash) continuing the live chain, 5,000 per
 * transaction under the head lock, then the Merkle nodes are built by the service's own catch-up
 * (the path a database migrated from before the tree takes). The chain only grows: the 1M
 * scenario extends the 10k one's chain.
 */

const SEED_BATCH = 5000;
const PROOF_PATHS = 20_000;

const KINDS: { source: FactSource; kind: FactKind }[] = [
  { source: 'OperatorAudit', kind: 'operator' },
  { source: 'ComplianceEvaluation', kind: 'compliance' },
  { source: 'TrustDriftEvent', kind: 'drift' },
  { source: 'CostAlert', kind: 'cost-alert-fired' },
];

async function chainHead(ctx: BenchContext): Promise<{ seqNo: number; headHash: string; merkleSize: number }> {
  const [head] = rowsOf<{ seq_no: string; head_hash: string; merkle_size: string }>(
    await ctx.app.database.db.execute(sql`SELECT seq_no::text, head_hash, merkle_size::text FROM audit_chain_head WHERE id = 1`),
  );
  return { seqNo: Number(head!.seq_no), headHash: head!.head_hash, merkleSize: Number(head!.merkle_size) };
}

/** Extends the chain to `target` facts (valid, chained) and builds their Merkle nodes. */
async function seedChain(ctx: BenchContext, target: number): Promise<void> {
  const db = ctx.app.database.db;
  const before = await chainHead(ctx);
  if (before.seqNo >= target && before.merkleSize >= before.seqNo) return;
  const started = performance.now();
  const epoch = Date.parse('2026-01-01T00:00:00.000Z');
  while ((await chainHead(ctx)).seqNo < target) {
    await withTransaction(db, async (tx) => {
      const [head] = rowsOf<{ seq_no: string; head_hash: string }>(await tx.execute(sql`SELECT seq_no::text, head_hash FROM audit_chain_head WHERE id = 1 FOR UPDATE`));
      let seqNo = Number(head!.seq_no);
      let prevHash = head!.head_hash;
      const rows: (typeof auditFacts.$inferInsert)[] = [];
      for (let i = 0; i < SEED_BATCH && seqNo < target; i++) {
        seqNo += 1;
        const { source, kind } = KINDS[seqNo % KINDS.length]!;
        const body = {
          seqNo,
          source,
          sourceId: `bench-${seqNo}`,
          kind,
          actor: seqNo % 3 === 0 ? null : `operator-${seqNo % 7}`,
          ts: new Date(epoch + seqNo * 1000).toISOString(),
          payload: { verb: 'bench.seed', target: `thing:${seqNo}`, surface: 'job', before: null, after: { n: seqNo, note: 'seeded by bench/audit.ts' } },
          prevHash,
        };
        const entryHash = entryHashOf(body);
        rows.push({ id: randomUUID(), ...body, entryHash });
        prevHash = entryHash;
      }
      await tx.execute(sql`INSERT INTO audit_facts ${insertRows(auditFacts, rows)}`);
      await tx.execute(sql`UPDATE audit_chain_head SET seq_no = ${seqNo}, head_hash = ${prevHash}, updated_at = now() WHERE id = 1`);
    });
  }
  const seededMs = performance.now() - started;
  const added = await catchUpMerkleTree(db);
  const treeMs = performance.now() - started - seededMs;
  await db.execute(sql`VACUUM (ANALYZE) audit_facts`);
  await db.execute(sql`VACUUM (ANALYZE) audit_merkle_nodes`);
  process.stdout.write(
    `  (audit chain: ${before.seqNo.toLocaleString('en')} → ${target.toLocaleString('en')} facts in ${(seededMs / 1000).toFixed(1)} s; ` +
      `Merkle nodes of ${added.toLocaleString('en')} facts built by the catch-up in ${(treeMs / 1000).toFixed(1)} s)\n`,
  );
}

/** Fixed pseudo-random seqNos in 1..size (the same every run). */
function proofPaths(size: number): string[] {
  let state = 20261125;
  const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: PROOF_PATHS }, () => `${V1}/audit/chain/${1 + Math.floor(next() * size)}`);
}

function proofScenario(name: string, size: number): Scenario {
  return {
    name,
    description: `GET {v1}/audit/chain/{seqNo} of a fact drawn at random among ${size.toLocaleString('en')} chained facts: the fact and the head in one statement, then the O(log n) stored Merkle nodes of its inclusion proof in another.`,
    setupBudgetSec: size >= 1_000_000 ? 1800 : 120,
    setup: async (ctx) => {
      await seedChain(ctx, size);
      return proofPaths(size);
    },
    request: (ctx, paths) => ({ method: 'GET', path: (paths as string[])[0]!, paths: paths as string[], headers: ctx.adminHeaders }),
  };
}

export const auditScenarios: Scenario[] = [
  proofScenario('audit-proof-10k', 10_000),
  proofScenario('audit-proof-1m', 1_000_000),
  {
    name: 'audit-verify',
    description:
      'The walk of POST {v1}/audit/chain/verify once over a chain of at least 1,000,000 facts: every entryHash recomputed, every link and every stored Merkle node checked, in batches of 2,000. Called on the service (the same code the endpoint runs) rather than over HTTP, so that a walk longer than the 30-s request deadline is still measured. Facts walked per second, and the growth of the process heap at its peak over the walk.',
    setupBudgetSec: 1800,
    setup: (ctx) => seedChain(ctx, 1_000_000),
    measure: async (ctx) => {
      const heapBefore = process.memoryUsage().heapUsed;
      let heapPeak = heapBefore;
      const sampler = setInterval(() => {
        heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
      }, 25);
      const started = performance.now();
      try {
        const chain = createAuditChainService({ db: ctx.app.database.db, clock: systemClock, audit: ctx.app.audit });
        const principal: Principal = { userId: 'bench', username: 'bench', scopes: new Set(['write:alerts']), toolsets: null, via: 'bearer', tokenId: null, sessionId: null };
        const answer = await chain.verify({ principal, requestId: 'bench-audit-verify' });
        const seconds = (performance.now() - started) / 1000;
        return {
          factsWalked: answer.walkedCount,
          seconds: Math.round(seconds * 10) / 10,
          factsPerSec: Math.round(answer.walkedCount / seconds),
          peakHeapGrowthMB: Math.round(((heapPeak - heapBefore) / 1_048_576) * 10) / 10,
          intact: answer.intact && answer.merkle.intact ? 1 : 0,
          // The verify endpoint's own deadline (registry timeoutMs), not the server's default.
          withinRequestDeadline: seconds * 1000 <= LONG_WORK_TIMEOUT_MS ? 1 : 0,
        };
      } finally {
        clearInterval(sampler);
      }
    },
  },
];
