import { randomUUID } from 'node:crypto';
import { type AuditLog, actorOf, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import { canonicalJson, sha256Hex } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { badRequest, notFound } from '../../../platform/errors.ts';
import { V1 } from '../../../platform/http/registry.ts';
import type { Catalogue, Control, Outcome } from '../frameworks/catalogue.ts';
import { type ComplianceSources, observe } from './observe.ts';
import { evaluatePredicate, PREDICATES, type PredicateKey } from './predicates.ts';
import * as repo from './repository.ts';

/**
 * Compliance evaluations (docs/compliance/README.md, "Evaluation", "Overrides", "Replay"): the pass the
 * `compliance-evaluate` job runs, operator overrides, the outcome in force per control, and replay
 * of a stored evaluation from its own `observed` payload.
 */

export const JOB_EVALUATOR = 'job';
export const NOTE_MAX = 2000;
export const OVERRIDE_OBSERVED_MAX_BYTES = 16_384;

/** The digest of an observed payload: SHA-256 of its RFC 8785 canonical JSON (null hashes as `null`). */
export const observedDigest = (observed: unknown) => sha256Hex(canonicalJson(observed ?? null));

export interface EvaluationServiceDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  catalogue: Catalogue;
  sources: ComplianceSources;
  /** OBSERVATORY_PUBLIC_URL: evidence URLs are absolute. */
  publicUrl: string;
}

export interface PassResult {
  passId: string;
  evaluated: number;
  outcomes: Record<Outcome, number>;
  overridesEnded: number;
  /** Predicates whose input could not be read: their controls got no evaluation this pass. */
  failures: { predicateKey: string; error: string }[];
}

export function createEvaluationService(deps: EvaluationServiceDeps) {
  const { db, clock, audit, catalogue, sources } = deps;
  const evidenceUrl = (key: PredicateKey, evaluationId: string) => {
    const path = PREDICATES[key].evidencePath.replace('{v1}', V1);
    // Unbuilt inputs have no evidence of their own beyond the stored input: the replay shows it.
    return `${deps.publicUrl}${path === `${V1}/compliance/posture` ? `${V1}/compliance/replay/${evaluationId}` : path}`;
  };

  /** Observes every predicate the catalogue uses once, and stores one evaluation per control. */
  async function evaluateAll(): Promise<PassResult> {
    const now = clock.now();
    const passId = randomUUID();
    const keys = [...new Set(catalogue.frameworks.flatMap((f) => f.controls.map((c) => c.predicateKey as PredicateKey)))];
    const observed = new Map<PredicateKey, Record<string, unknown>>();
    const failures: PassResult['failures'] = [];
    for (const key of keys) {
      try {
        observed.set(key, await observe(key, sources, now));
      } catch (error) {
        failures.push({ predicateKey: key, error: error instanceof Error ? error.message : String(error) });
      }
    }
    const rows: repo.NewEvaluation[] = [];
    for (const control of catalogue.frameworks.flatMap((f) => f.controls)) {
      const input = observed.get(control.predicateKey as PredicateKey);
      if (input === undefined) continue;
      const verdict = evaluatePredicate(control.predicateKey, input);
      const id = randomUUID();
      rows.push({
        id,
        framework: control.framework,
        controlId: control.controlId,
        predicateKey: control.predicateKey,
        outcome: verdict.outcome,
        summary: verdict.summary,
        observed: input,
        observedSha256: observedDigest(input),
        evidenceUrl: evidenceUrl(control.predicateKey as PredicateKey, id),
        evaluatedBy: JOB_EVALUATOR,
        passId,
        runAt: now,
        note: null,
        overriddenOutcome: null,
        endedAt: null,
      });
    }
    const overridesEnded = await withTransaction(db, async (tx) => {
      await repo.insertEvaluations(tx, rows);
      // An override holds while the automatic outcome stays the one it overrode; a change ends it.
      const ended = (await repo.openOverrides(tx)).filter((o) => {
        const fresh = rows.find((r) => r.framework === o.framework && r.controlId === o.controlId);
        return fresh !== undefined && fresh.outcome !== o.overriddenOutcome;
      });
      await repo.endOverrides(tx, ended.map((o) => o.id), now);
      for (const row of rows) {
        const endedOverride = ended.find((o) => o.framework === row.framework && o.controlId === row.controlId);
        await audit.appendFact(tx, {
          source: 'ComplianceEvaluation',
          sourceId: row.id,
          kind: 'compliance',
          actor: null,
          payload: factPayload(row, endedOverride?.id ?? null),
        });
      }
      return ended.length;
    });
    const outcomes: Record<Outcome, number> = { pass: 0, fail: 0, 'manual-review': 0, 'n/a': 0 };
    for (const row of rows) outcomes[row.outcome as Outcome] += 1;
    return { passId, evaluated: rows.length, outcomes, overridesEnded, failures };
  }

  function controlOf(ref: string, framework: string | undefined): Control {
    const found = catalogue.control(ref, framework);
    if (found.control !== null) return found.control;
    if (found.ambiguous.length > 1) {
      throw badRequest('ambiguous-control', `Control ${ref} is in several frameworks (${found.ambiguous.join(', ')}): name one with framework, or use the control's id.`, { field: 'body.controlId' });
    }
    if (framework !== undefined && catalogue.framework(framework) === null) throw notFound(`There is no compliance framework ${framework}.`);
    throw notFound(`There is no compliance control ${ref}${framework === undefined ? '' : ` in ${framework}`}.`);
  }

  return {
    evaluateAll,

    /**
     * `POST {v1}/compliance/override`: an evaluation by `operator:<userId>` that stays in force
     * until an automatic evaluation of the control changes its outcome, or another override
     * replaces it. Audited as `compliance.override`, and chained as a ComplianceEvaluation fact.
     */
    async override(ctx: CallContext, input: { controlId: string; framework?: string | undefined; outcome: Outcome; note: string; observed?: unknown }) {
      const control = controlOf(input.controlId, input.framework);
      const note = input.note.trim();
      if (note.length === 0) throw badRequest('invalid-body', 'note must say why the outcome is overridden.', { field: 'body.note' });
      const observed = input.observed ?? null;
      if (Buffer.byteLength(JSON.stringify(observed)) > OVERRIDE_OBSERVED_MAX_BYTES) {
        throw badRequest('invalid-body', `observed may hold at most ${OVERRIDE_OBSERVED_MAX_BYTES} bytes of JSON.`, { field: 'body.observed' });
      }
      const now = clock.now();
      const id = randomUUID();
      const evaluatedBy = `operator:${ctx.principal.userId}`;
      await withTransaction(db, async (tx) => {
        await repo.lockControl(tx, control.id);
        const [automatic] = await repo.latestJobEvaluations(tx, control.framework, [control.controlId]);
        const [previous] = await repo.openOverrides(tx, control.framework).then((rows) => rows.filter((r) => r.controlId === control.controlId));
        await repo.endOverrides(tx, previous ? [previous.id] : [], now);
        const row: repo.NewEvaluation = {
          id,
          framework: control.framework,
          controlId: control.controlId,
          predicateKey: control.predicateKey,
          outcome: input.outcome,
          summary: `Set to ${input.outcome} by ${ctx.principal.username}: ${note}`,
          observed,
          observedSha256: observedDigest(observed),
          evidenceUrl: `${deps.publicUrl}${V1}/compliance/replay/${id}`,
          evaluatedBy,
          passId: null,
          runAt: now,
          note,
          overriddenOutcome: automatic?.outcome ?? null,
          endedAt: null,
        };
        await repo.insertEvaluations(tx, [row]);
        await audit.record(tx, {
          verb: 'compliance.override',
          target: `compliance-control:${control.id}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: previous ? inForce(previous) : automatic ? inForce(automatic) : null,
          after: inForce(row),
          requestId: ctx.requestId,
        });
        await audit.appendFact(tx, { source: 'ComplianceEvaluation', sourceId: id, kind: 'compliance', actor: ctx.principal.username, payload: factPayload(row, previous?.id ?? null) });
      });
      return { ok: true as const, evaluationId: id };
    },

    /** The evaluation in force per control of a framework: its open override, else its newest job evaluation. */
    async inForce(framework: string, controlIds: readonly string[]): Promise<Map<string, repo.EvaluationRow>> {
      const [automatic, overrides] = await Promise.all([repo.latestJobEvaluations(db, framework, controlIds), repo.openOverrides(db, framework)]);
      const byControl = new Map(automatic.map((row) => [row.controlId, row]));
      for (const o of overrides) if (controlIds.includes(o.controlId)) byControl.set(o.controlId, o);
      return byControl;
    },

    /**
     * `GET {v1}/compliance/replay/{evaluationId}`: recomputes the outcome from the row's stored
     * `observed` with the predicate this version ships, and checks the payload against the digest
     * taken when it was stored. Not a live re-evaluation.
     */
    async replay(evaluationId: string) {
      const row = await repo.evaluationById(db, evaluationId);
      if (row === null) throw notFound(`There is no compliance evaluation ${evaluationId}.`);
      const replayed = evaluatePredicate(row.predicateKey, row.observed);
      const digest = observedDigest(row.observed);
      const digestMatches = digest === row.observedSha256;
      return {
        evaluationId: row.id,
        framework: row.framework,
        controlId: row.controlId,
        predicateKey: row.predicateKey,
        evaluatedBy: row.evaluatedBy,
        storedOutcome: row.outcome as Outcome,
        replayedOutcome: replayed.outcome,
        matches: digestMatches && replayed.outcome === row.outcome && replayed.summary === row.summary,
        runAt: row.runAt.toISOString(),
        storedSummary: row.summary,
        replayedSummary: replayed.summary,
        observed: row.observed ?? null,
        observedSha256: row.observedSha256,
        digestMatches,
      };
    },
  };
}

export type EvaluationService = ReturnType<typeof createEvaluationService>;

/** What the audit chain keeps of an evaluation: enough to tell the row apart and prove its input. */
function factPayload(row: repo.NewEvaluation, endedOverrideId: string | null) {
  return {
    framework: row.framework,
    controlId: row.controlId,
    predicateKey: row.predicateKey,
    outcome: row.outcome,
    evaluatedBy: row.evaluatedBy,
    observedSha256: row.observedSha256,
    passId: row.passId,
    ...(endedOverrideId !== null ? { endedOverrideId } : {}),
  };
}

function inForce(row: repo.NewEvaluation) {
  return { evaluationId: row.id, outcome: row.outcome, evaluatedBy: row.evaluatedBy, runAt: row.runAt.toISOString(), note: row.note };
}

