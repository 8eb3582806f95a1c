import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { createCatalogue } from '../src/domains/compliance/frameworks/catalogue.ts';
import { entryHashOf, type FactKind, type FactSource } from '../src/platform/audit/chain.ts';
import { auditFacts, operatorAudit } from '../src/platform/audit/schema.ts';
import { catchUpMerkleTree } from '../src/platform/audit/service.ts';
import { type Db, rowsOf } from '../src/platform/db/client.ts';
import { insertRows } from '../src/platform/db/prepared.ts';
import { withTransaction } from '../src/platform/db/transaction.ts';
import { V1 } from '../src/platform/http/registry.ts';
import { seedHoneypotEvents } from './honeypot-seed.ts';
import { type BenchContext, defineScenario, type Scenario } from './scenarios.ts';

/**
 * The compliance evaluation (docs/compliance/README.md; docs/performance.md, "Compliance evaluation"): one
 * full pass of the `compliance-evaluate` job over both shipped frameworks, and `GET
 * {v1}/compliance/posture`, first on an almost empty database, then with 1,000,000 honeypot events,
 * 100,000 audit facts and 50,000 stored evaluations. Target: each at most 2× its time on the almost
 * empty database, which holds when every predicate reads an index probe, the chain head or a small
 * table, and the framework read probes the newest evaluation of each control instead of scanning
 * the history.
 *
 * The pass is the job itself, run through `POST {v1}/ops/jobs/compliance-evaluate/run` with the
 * admin token: the scheduler's code path and run record, the 26 evaluations inserted and each
 * appended to the audit chain (head lock, Merkle nodes), plus the endpoint's own `job.run` audit
 * record. Measured: the wall time of the call (the target's figure) and the run's own `durationMs`
 * (the job alone). The median of EVALUATE_RUNS calls after EVALUATE_WARMUP unmeasured ones, then the
 * median of POSTURE_RUNS posture reads after POSTURE_WARMUP unmeasured ones, at each size, one call
 * at a time. The unmeasured calls matter: the empty size runs first, and with 3 of them its median
 * still fell run after run (code and connections warming), which made the seeded size look faster
 * than the empty one; with 10 the two agree when the seeded rows are few.
 *
 * Run it on its own (`BENCH_ONLY=compliance-evaluate`): the "almost empty" size is whatever the
 * database holds when the scenario starts (the admin token, its audit facts), so after other
 * scenarios it is not empty; the row counts at both sizes are part of the figures.
 *
 * What is stored between the sizes, straight into the database:
 * - honeypot events up to 1,000,000 in all (bench/honeypot-seed.ts, tenant `bench-compliance`).
 *   No predicate reads them: they are there to show that nothing scans them.
 * - the audit chain extended to 100,000 facts, valid and chained (each entryHash computed as the
 *   append computes it) so that the job's appends after them run the normal path, then the Merkle
 *   nodes built by the service's own catch-up (as bench/audit.ts). Four facts in ten are operator
 *   records with their operator_audit row (24 verbs, so `operator_audit_verb_idx` has many keys),
 *   every 5,000th of them an `audit.verify-chain` record (the audit predicate reads the newest);
 *   the rest compliance, cost-alert, restore and drift facts. Their times run from the last live
 *   fact's to now, so the chain stays in time order.
 * - compliance evaluations up to 50,000 rows: hourly passes of every control (each pass with one
 *   pass id, outcomes mostly pass, unbuilt predicates n/a), one row in ~1,000 an operator override
 *   already ended (not in force), so the framework read's per-control probe and the open-override
 *   read both have history to skip. Their `observed` payloads are small placeholders and their
 *   digests are not the payloads' (replay is not measured).
 * Then VACUUM (ANALYZE) of the tables written, as autovacuum would do within a minute, and
 * EXPLAIN ANALYZE of the reads that could grow (the newest job evaluation of a control, the newest
 * `audit.verify-chain` record, the open overrides), printed at both sizes.
 */

const HONEYPOT_EVENTS = 1_000_000;
const AUDIT_FACTS = 100_000;
const EVALUATION_ROWS = 50_000;
const EVALUATE_WARMUP = 10;
const EVALUATE_RUNS = 21;
const POSTURE_RUNS = 31;
const POSTURE_WARMUP = 10;
const TARGET_RATIO = 2;
const JOB = 'compliance-evaluate';
const EVALUATE_PATH = `${V1}/ops/jobs/${JOB}/run`;
const POSTURE_PATH = `${V1}/compliance/posture`;
/** Generous: the bench's api() helper gives up after 10 s, and the machine may be shared. */
const CALL_TIMEOUT_MS = 120_000;
const TENANT = 'bench-compliance';
const FACT_BATCH = 5000;
const VERIFY_EVERY = 5000;

const VERBS = [
  'session.login', 'token.create', 'token.revoke', 'alert.create', 'alert.update', 'backup.snapshot', 'backup.verify',
  'backup.drill-run', 'backup.expire', 'cost.budget-set', 'cost.records-upsert', 'empire-alert.create', 'empire-incident.open',
  'empire-incident.update', 'empire.note-upsert', 'graph.saved-query-upsert', 'job.run', 'provenance.register',
  'provenance.policy', 'tenant.create', 'triage.decide', 'agent-api.topics-upsert', 'passkey.register', 'compliance.override',
];

const controls = createCatalogue().frameworks.flatMap((f) => f.controls.map((c) => ({ framework: f.framework, controlId: c.controlId, predicateKey: c.predicateKey })));

const round1 = (n: number) => Math.round(n * 10) / 10;
const round2 = (n: number) => Math.round(n * 100) / 100;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function count(db: Db, query: ReturnType<typeof sql>): Promise<number> {
  const [row] = rowsOf<{ n: unknown }>(await db.execute(query));
  return Number(row?.n ?? 0);
}

interface Sizes {
  honeypotEvents: number;
  auditFacts: number;
  operatorAuditRows: number;
  evaluationRows: number;
}

async function sizes(db: Db): Promise<Sizes> {
  return {
    honeypotEvents: await count(db, sql`SELECT count(*) AS n FROM honeypot_events`),
    auditFacts: await count(db, sql`SELECT seq_no AS n FROM audit_chain_head WHERE id = 1`),
    operatorAuditRows: await count(db, sql`SELECT count(*) AS n FROM operator_audit`),
    evaluationRows: await count(db, sql`SELECT count(*) AS n FROM compliance_evaluations`),
  };
}

async function call(ctx: BenchContext, method: 'GET' | 'POST', path: string): Promise<{ ms: number; body: unknown }> {
  const started = performance.now();
  const response = await fetch(`${ctx.baseUrl}${path}`, {
    method,
    headers: { ...ctx.adminHeaders, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
    ...(method === 'POST' ? { body: '{}' } : {}),
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  return { ms, body: JSON.parse(text) as unknown };
}

interface JobRunAnswer {
  run: { outcome: string; durationMs: number | null; errorText: string | null; stats: { evaluated?: number } };
}

/** One job run through the API; throws unless it succeeded and evaluated every control. */
async function evaluate(ctx: BenchContext): Promise<{ wallMs: number; jobMs: number }> {
  const { ms, body } = await call(ctx, 'POST', EVALUATE_PATH);
  const { run } = body as JobRunAnswer;
  if (run.outcome !== 'ok') throw new Error(`${JOB} ended ${run.outcome}: ${run.errorText ?? ''}`);
  if (run.stats.evaluated !== controls.length) throw new Error(`${JOB} evaluated ${String(run.stats.evaluated)} controls, not ${controls.length}`);
  return { wallMs: ms, jobMs: run.durationMs ?? Number.NaN };
}

/** One posture read; throws unless every framework is answered with its newest evaluation. */
async function posture(ctx: BenchContext): Promise<number> {
  const { ms, body } = await call(ctx, 'GET', POSTURE_PATH);
  const { frameworks } = body as { frameworks: { framework: string; totalControls: number; asOf: string | null }[] };
  const evaluated = frameworks.reduce((sum, f) => sum + (f.asOf === null ? 0 : f.totalControls), 0);
  if (evaluated !== controls.length) throw new Error(`posture answered ${JSON.stringify(frameworks)}: not every control evaluated`);
  return ms;
}

interface Measured {
  evaluateMs: number;
  evaluateJobMs: number;
  postureMs: number;
}

/**
 * An unmeasured GET /healthz, retried: after minutes of seeding (on PGlite with the event loop
 * busy throughout) the client's kept-alive socket may be one the server is closing, and the first
 * request on it fails without reaching the app ("fetch failed"). The measured calls get a fresh one.
 */
async function freshConnection(ctx: BenchContext): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await fetch(`${ctx.baseUrl}/healthz`, { signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
      await response.text();
      return;
    } catch (error) {
      if (attempt === 3) throw error;
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
      process.stdout.write(`  (compliance-evaluate: GET /healthz failed${cause}; again)\n`);
    }
  }
}

async function measureSize(ctx: BenchContext, label: string): Promise<Measured> {
  await freshConnection(ctx);
  for (let i = 0; i < EVALUATE_WARMUP; i++) await evaluate(ctx);
  const runs: { wallMs: number; jobMs: number }[] = [];
  for (let i = 0; i < EVALUATE_RUNS; i++) runs.push(await evaluate(ctx));
  for (let i = 0; i < POSTURE_WARMUP; i++) await posture(ctx);
  const reads: number[] = [];
  for (let i = 0; i < POSTURE_RUNS; i++) reads.push(await posture(ctx));
  const measured = {
    evaluateMs: round1(median(runs.map((r) => r.wallMs))),
    evaluateJobMs: round1(median(runs.map((r) => r.jobMs))),
    postureMs: round1(median(reads)),
  };
  const range = (values: number[]) => `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)} ms`;
  process.stdout.write(
    `  (${label}: evaluate median ${measured.evaluateMs} ms through the API (${range(runs.map((r) => r.wallMs))}), job ${measured.evaluateJobMs} ms, ` +
      `${EVALUATE_RUNS} runs; posture median ${measured.postureMs} ms (${range(reads)}), ${POSTURE_RUNS} reads)\n`,
  );
  return measured;
}

// Seeding -----------------------------------------------------------------------------------------

async function seedHoneypot(ctx: BenchContext): Promise<void> {
  const db = ctx.app.database.db;
  const have = await count(db, sql`SELECT count(*) AS n FROM honeypot_events`);
  if (have >= HONEYPOT_EVENTS) return;
  const find = async () => rowsOf<{ id: string }>(await db.execute(sql`SELECT id::text AS id FROM honeypot_tenants WHERE slug = ${TENANT}`))[0]?.id;
  if ((await find()) === undefined) await ctx.api('POST', `${V1}/honeypot/tenants`, { slug: TENANT, name: 'Compliance bench' });
  const started = performance.now();
  await seedHoneypotEvents(ctx.app, (await find())!, HONEYPOT_EVENTS - have);
  process.stdout.write(`  (compliance-evaluate: ${(HONEYPOT_EVENTS - have).toLocaleString('en')} honeypot events seeded in ${seconds(performance.now() - started)})\n`);
}

type FactRow = typeof auditFacts.$inferInsert;
type OperatorRow = typeof operatorAudit.$inferInsert;

/** The fact at `seqNo` (and its operator_audit row when it is an operator record), as the services would write it. */
function seededFact(seqNo: number, ts: Date, prevHash: string): { fact: FactRow; operator: OperatorRow | null } {
  const id = randomUUID();
  const actor = `operator-${seqNo % 5}`;
  let source: FactSource;
  let kind: FactKind;
  let payload: unknown;
  let operator: OperatorRow | null = null;
  const slot = seqNo % 10;
  if (seqNo % VERIFY_EVERY === 0 || slot < 4) {
    const verify = seqNo % VERIFY_EVERY === 0;
    const verb = verify ? 'audit.verify-chain' : VERBS[(seqNo * 7919) % VERBS.length]!;
    const target = verify ? 'audit-chain' : `${verb.split('.')[0]}:${seqNo % 997}`;
    const after = verify
      ? { intact: true, walkedCount: seqNo - 1, divergence: null, headSeqNo: seqNo - 1, headHash: prevHash, merkle: { intact: true, checkedLeaves: seqNo - 1, divergence: null } }
      : { n: seqNo, note: 'seeded by bench/compliance-evaluate.ts' };
    const surface = verify || slot === 0 ? 'api' : slot === 1 ? 'cli' : 'job';
    source = 'OperatorAudit';
    kind = 'operator';
    payload = { verb, target, surface, before: null, after };
    operator = { id, seqNo, ts, actorUserId: null, actor, surface, verb, target, before: null, after, requestId: `bench-${seqNo}` };
  } else if (slot < 7) {
    const control = controls[seqNo % controls.length]!;
    source = 'ComplianceEvaluation';
    kind = 'compliance';
    payload = { ...control, outcome: 'pass', evaluatedBy: 'job', observedSha256: prevHash, passId: null };
  } else if (slot === 7) {
    source = 'CostAlert';
    kind = 'cost-alert-fired';
    payload = { alertId: `alert-${seqNo}`, scope: 'toolset', scopeKey: `toolset-${seqNo % 12}`, thresholdPct: 80 + (seqNo % 3) * 20 };
  } else if (slot === 8) {
    source = 'RestoreVerification';
    kind = 'backup';
    payload = { database: 'observatory', snapshotId: `snap-${seqNo}`, outcome: 'ok' };
  } else {
    source = 'TrustDriftEvent';
    kind = 'drift';
    payload = { toolset: `toolset-${seqNo % 12}`, severity: seqNo % 4 === 0 ? 'critical' : 'minor' };
  }
  const body = { seqNo, source, sourceId: id, kind, actor, ts: ts.toISOString(), payload, prevHash };
  return { fact: { id, ...body, entryHash: entryHashOf(body) }, operator };
}

/** Extends the chain to AUDIT_FACTS valid facts, then builds their Merkle nodes with the service's catch-up. */
async function seedAuditChain(ctx: BenchContext): Promise<void> {
  const db = ctx.app.database.db;
  const [start] = rowsOf<{ seq_no: string; last_ts: string | null }>(
    await db.execute(sql`SELECT h.seq_no::text, (SELECT ts FROM audit_facts WHERE seq_no = h.seq_no) AS last_ts FROM audit_chain_head h WHERE h.id = 1`),
  );
  const first = Number(start!.seq_no);
  if (first >= AUDIT_FACTS) return;
  const started = performance.now();
  const from = start!.last_ts === null ? Date.now() - 30 * 86_400_000 : Date.parse(start!.last_ts);
  const step = (Date.now() - from) / (AUDIT_FACTS - first + 1);
  let done = false;
  while (!done) {
    done = await withTransaction(db, async (tx) => {
      const [head] = rowsOf<{ seq_no: string; head_hash: string }>(await tx.execute(sql`SELECT seq_no::text, head_hash FROM audit_chain_head WHERE id = 1 FOR UPDATE`));
      let seqNo = Number(head!.seq_no);
      let prevHash = head!.head_hash;
      const facts: FactRow[] = [];
      const operators: OperatorRow[] = [];
      while (facts.length < FACT_BATCH && seqNo < AUDIT_FACTS) {
        seqNo += 1;
        const { fact, operator } = seededFact(seqNo, new Date(Math.round(from + (seqNo - first) * step)), prevHash);
        facts.push(fact);
        if (operator) operators.push(operator);
        prevHash = fact.entryHash;
      }
      if (facts.length > 0) {
        await tx.execute(sql`INSERT INTO audit_facts ${insertRows(auditFacts, facts)}`);
        if (operators.length > 0) await tx.execute(sql`INSERT INTO operator_audit ${insertRows(operatorAudit, operators)}`);
        await tx.execute(sql`UPDATE audit_chain_head SET seq_no = ${seqNo}, head_hash = ${prevHash}, updated_at = now() WHERE id = 1`);
      }
      return seqNo >= AUDIT_FACTS;
    });
  }
  const seededMs = performance.now() - started;
  const added = await catchUpMerkleTree(db);
  for (const table of ['audit_facts', 'operator_audit', 'audit_merkle_nodes']) await db.execute(sql`VACUUM (ANALYZE) ${sql.identifier(table)}`);
  process.stdout.write(
    `  (compliance-evaluate: audit chain ${first.toLocaleString('en')} → ${AUDIT_FACTS.toLocaleString('en')} facts in ${seconds(seededMs)}; ` +
      `Merkle nodes of ${added.toLocaleString('en')} facts built in ${seconds(performance.now() - started - seededMs)})\n`,
  );
}

const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;
const textArray = (values: readonly string[]) => sql.raw(`ARRAY[${values.map(literal).join(',')}]::text[]`);
const UNBUILT_PREDICATES = ['no-open-critical-drift', 'chaos-recovery-within-slo', 'federation-region-parity'];

/** Hourly passes of every control up to EVALUATION_ROWS rows, older than anything the job wrote. */
async function seedEvaluations(ctx: BenchContext): Promise<void> {
  const db = ctx.app.database.db;
  const have = await count(db, sql`SELECT count(*) AS n FROM compliance_evaluations`);
  if (have >= EVALUATION_ROWS) return;
  const passes = Math.ceil((EVALUATION_ROWS - have) / controls.length);
  const started = performance.now();
  await db.execute(sql`
    INSERT INTO compliance_evaluations (id, framework, control_id, predicate_key, outcome, summary, observed, observed_sha256, evidence_url,
      evaluated_by, pass_id, run_at, note, overridden_outcome, ended_at)
    SELECT id, framework, control_id, predicate_key, outcome,
      CASE WHEN override THEN 'Set to ' || outcome || ' by bench: seeded override' ELSE 'Seeded evaluation: ' || outcome END,
      jsonb_build_object('asOf', to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'seeded', true, 'pass', p),
      md5(id::text) || md5(p::text), 'http://127.0.0.1:8080/api/observatory/v1/compliance/replay/' || id,
      CASE WHEN override THEN 'operator:bench' ELSE 'job' END,
      CASE WHEN override THEN NULL ELSE md5('bench-pass-' || p)::uuid END,
      run_at,
      CASE WHEN override THEN 'seeded override' ELSE NULL END,
      CASE WHEN override THEN 'fail' ELSE NULL END,
      CASE WHEN override THEN run_at + interval '1 hour' ELSE NULL END
    FROM (
      SELECT gen_random_uuid() AS id, p, c, framework, control_id, predicate_key,
        now() - (${passes}::int + 1 - p) * interval '1 hour' AS run_at,
        (p * 31 + c) % 997 = 0 AS override,
        CASE WHEN predicate_key = ANY(${textArray(UNBUILT_PREDICATES)}) THEN 'n/a'
             WHEN hashint4((p * 100 + c)::int) & 1023 < 900 THEN 'pass'
             WHEN hashint4((p * 100 + c)::int) & 1023 < 970 THEN 'fail' ELSE 'manual-review' END AS outcome
      FROM generate_series(1, ${passes}::int) AS p
      CROSS JOIN unnest(${textArray(controls.map((c) => c.framework))}, ${textArray(controls.map((c) => c.controlId))},
        ${textArray(controls.map((c) => c.predicateKey))}) WITH ORDINALITY AS k(framework, control_id, predicate_key, c)
      ORDER BY p, c
    ) e`);
  await db.execute(sql`VACUUM (ANALYZE) compliance_evaluations`);
  process.stdout.write(
    `  (compliance-evaluate: ${(passes * controls.length).toLocaleString('en')} evaluations (${passes.toLocaleString('en')} hourly passes of ${controls.length} controls) seeded in ${seconds(performance.now() - started)})\n`,
  );
}

/**
 * Runs the seeding again (each step tops up to its size from what is stored, and commits in whole
 * statements or batches) when the server ended its connection from outside: on a machine shared
 * with other work, backends running a long INSERT were seen terminated by an administrator command.
 */
async function seedAll(ctx: BenchContext): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await seedHoneypot(ctx);
      await seedAuditChain(ctx);
      await seedEvaluations(ctx);
      return;
    } catch (error) {
      const text = `${String(error)} ${error instanceof Error ? String(error.cause) : ''}`;
      if (attempt === 3 || !/terminating connection|Connection terminated/i.test(text)) throw error;
      process.stdout.write(`  (compliance-evaluate: the seeding's connection was terminated (${text.match(/terminating connection[^\n]*|Connection terminated[^\n]*/i)?.[0]}); seeding on from what is stored)\n`);
    }
  }
}

// Plans -------------------------------------------------------------------------------------------

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

/** EXPLAIN ANALYZE of one statement as one line: its nodes (index, rows, rows filtered out), buffers and time. */
async function explain(db: Db, statement: ReturnType<typeof sql>): Promise<string> {
  const [row] = rowsOf<Record<string, unknown>>(await db.execute(sql`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement}`));
  const raw = Object.values(row ?? {})[0];
  const [plan] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode; 'Execution Time': number }];
  const steps: string[] = [];
  const walk = (node: PlanNode) => {
    const filtered = node['Rows Removed by Filter'] ? `, ${node['Rows Removed by Filter'].toLocaleString('en')} filtered out` : '';
    steps.push(`${node['Node Type']}${node['Index Name'] ? ` on ${node['Index Name']}` : ''} (${((node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1)).toLocaleString('en')} rows${filtered})`);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan.Plan);
  const buffers = (plan.Plan['Shared Hit Blocks'] ?? 0) + (plan.Plan['Shared Read Blocks'] ?? 0);
  return `${steps.join(' ← ')}; ${buffers} buffers, ${plan['Execution Time'].toFixed(2)} ms`;
}

/** The reads that could grow with the history, as the repositories write them (evaluation/repository.ts, platform/audit/repository.ts). */
async function printPlans(ctx: BenchContext, label: string): Promise<void> {
  const db = ctx.app.database.db;
  const control = controls[0]!;
  const plans = {
    'newest job evaluation of a control': sql`SELECT * FROM compliance_evaluations WHERE framework = ${control.framework} AND control_id = ${control.controlId} AND evaluated_by = 'job' ORDER BY seq DESC LIMIT 1`,
    'newest audit.verify-chain record': sql`SELECT * FROM operator_audit WHERE verb = 'audit.verify-chain' ORDER BY seq_no DESC LIMIT 1`,
    'open overrides': sql`SELECT * FROM compliance_evaluations WHERE evaluated_by <> 'job' AND ended_at IS NULL`,
  };
  for (const [name, statement] of Object.entries(plans)) process.stdout.write(`  (${label} plan, ${name}: ${await explain(db, statement)})\n`);
}

// The scenario ------------------------------------------------------------------------------------

interface State {
  empty: Measured;
  emptySizes: Sizes;
}

export const complianceEvaluateScenario: Scenario = defineScenario<State>({
  name: 'compliance-evaluate',
  description: `One compliance-evaluate job run (POST {v1}/ops/jobs/compliance-evaluate/run: every control of both frameworks evaluated, stored and chained) and GET {v1}/compliance/posture, each the median of sequential calls, on the almost empty database and again with ${HONEYPOT_EVENTS.toLocaleString('en')} honeypot events, ${AUDIT_FACTS.toLocaleString('en')} audit facts and ${EVALUATION_ROWS.toLocaleString('en')} evaluations stored. Target: each at most ${TARGET_RATIO}× its empty-database time.`,
  setupBudgetSec: 1800,
  setup: async (ctx) => {
    const db = ctx.app.database.db;
    const emptySizes = await sizes(db);
    const empty = await measureSize(ctx, 'almost empty');
    await printPlans(ctx, 'almost empty');
    await seedAll(ctx);
    return { empty, emptySizes };
  },
  measure: async (ctx, { empty, emptySizes }) => {
    const db = ctx.app.database.db;
    const full = await measureSize(ctx, 'seeded');
    await printPlans(ctx, 'seeded');
    const seeded = await sizes(db);
    const evaluateRatio = round2(full.evaluateMs / empty.evaluateMs);
    const postureRatio = round2(full.postureMs / empty.postureMs);
    return {
      emptyEvaluateMs: empty.evaluateMs,
      evaluateMs: full.evaluateMs,
      evaluateRatio,
      emptyEvaluateJobMs: empty.evaluateJobMs,
      evaluateJobMs: full.evaluateJobMs,
      evaluateJobRatio: round2(full.evaluateJobMs / empty.evaluateJobMs),
      emptyPostureMs: empty.postureMs,
      postureMs: full.postureMs,
      postureRatio,
      withinTarget: evaluateRatio <= TARGET_RATIO && postureRatio <= TARGET_RATIO ? 1 : 0,
      controlsEvaluated: controls.length,
      emptyHoneypotEvents: emptySizes.honeypotEvents,
      emptyAuditFacts: emptySizes.auditFacts,
      emptyEvaluationRows: emptySizes.evaluationRows,
      honeypotEvents: seeded.honeypotEvents,
      auditFacts: seeded.auditFacts,
      operatorAuditRows: seeded.operatorAuditRows,
      evaluationRows: seeded.evaluationRows,
    };
  },
});
