import { notFound } from '../../../platform/errors.ts';
import type { EvaluationService } from '../evaluation/service.ts';
import type { Catalogue, Framework, Outcome } from './catalogue.ts';
import type { Badge, ComplianceReads, ControlView, FrameworkView, PostureView } from './views.ts';

/**
 * The framework read and the posture (docs/compliance/README.md, "Posture"): each control with the
 * evaluation in force, and per framework the counts and a badge.
 */

/** Below this pass rate a framework is red whatever failed; a failing critical control is red at any rate. */
export const RED_BELOW_PCT = 80;

/**
 * The badge of a framework's counts. Of the controls that apply (total − n/a):
 * - `unknown`: never evaluated, or none applies;
 * - `red`: a critical control fails, or fewer than RED_BELOW_PCT % pass;
 * - `yellow`: some control fails (none critical) and at least RED_BELOW_PCT % pass;
 * - `manual-review`: nothing fails and some control awaits an operator;
 * - `green`: every control that applies passes.
 * A control never evaluated counts as awaiting review, so a partly evaluated framework is not green.
 */
export function badgeOf(counts: { applicable: number; passing: number; failing: number; manualReview: number; criticalFailing: number; evaluated: boolean }): Badge {
  if (!counts.evaluated || counts.applicable === 0) return 'unknown';
  const rate = (100 * counts.passing) / counts.applicable;
  if (counts.criticalFailing > 0 || rate < RED_BELOW_PCT) return 'red';
  if (counts.failing > 0) return 'yellow';
  if (counts.manualReview > 0) return 'manual-review';
  return 'green';
}

export function createFrameworkService(deps: { catalogue: Catalogue; evaluations: EvaluationService }): ComplianceReads {
  const { catalogue, evaluations } = deps;

  async function viewOf(framework: Framework): Promise<FrameworkView> {
    const inForce = await evaluations.inForce(framework.framework, framework.controls.map((c) => c.controlId));
    const controls: ControlView[] = framework.controls.map((c) => {
      const row = inForce.get(c.controlId);
      return {
        id: c.id,
        controlId: c.controlId,
        category: c.category,
        title: c.title,
        description: c.description,
        predicateKey: c.predicateKey,
        severity: c.severity,
        latestOutcome: (row?.outcome as Outcome | undefined) ?? null,
        latestRunAt: row?.runAt.toISOString() ?? null,
        latestSummary: row?.summary ?? null,
        latestEvaluationId: row?.id ?? null,
        latestEvaluatedBy: row?.evaluatedBy ?? null,
        latestEvidenceUrl: row?.evidenceUrl ?? null,
      };
    });
    return { framework: framework.framework, title: framework.title, version: framework.version, status: framework.status, controls };
  }

  function postureOf(view: FrameworkView): PostureView {
    const count = (outcome: Outcome) => view.controls.filter((c) => c.latestOutcome === outcome).length;
    const passing = count('pass');
    const failing = count('fail');
    const nA = count('n/a');
    const unevaluated = view.controls.filter((c) => c.latestOutcome === null).length;
    const manualReview = count('manual-review');
    const applicable = view.controls.length - nA;
    const runs = view.controls.map((c) => c.latestRunAt).filter((t): t is string => t !== null).sort();
    return {
      framework: view.framework,
      title: view.title,
      version: view.version,
      totalControls: view.controls.length,
      passing,
      failing,
      manualReview,
      nA,
      asOf: runs.at(-1) ?? null,
      badge: badgeOf({
        applicable,
        passing,
        failing,
        manualReview: manualReview + unevaluated,
        criticalFailing: view.controls.filter((c) => c.latestOutcome === 'fail' && c.severity === 'critical').length,
        evaluated: runs.length > 0,
      }),
      ratePct: applicable === 0 ? null : Math.round((1000 * passing) / applicable) / 10,
    };
  }

  return {
    async framework(key) {
      const framework = catalogue.framework(key);
      if (framework === null) throw notFound(`There is no compliance framework ${key}; the frameworks are ${catalogue.frameworks.map((f) => f.framework).join(', ')}.`);
      return viewOf(framework);
    },
    async posture() {
      const views = await Promise.all(catalogue.frameworks.map(viewOf));
      return views.map(postureOf);
    },
    async outcomesInForce() {
      const views = await Promise.all(catalogue.frameworks.map(viewOf));
      return views.flatMap((v) => v.controls.map((c) => ({ framework: v.framework, controlId: c.controlId, outcome: c.latestOutcome })));
    },
  };
}
