import type { Breach, Detector, DriftSeverity } from '../kinds.ts';

/** What compliance-fail reads of compliance: every framework's controls with the outcome in force. */
export interface ComplianceControlReads {
  frameworkKeys(): readonly string[];
  framework(key: string): Promise<{
    controls: { controlId: string; title: string; predicateKey: string; severity: DriftSeverity; latestOutcome: string | null; latestSummary: string | null; latestEvaluationId: string | null; latestEvaluatedBy: string | null }[];
  }>;
}

export const COMPLIANCE_CONTROL_SOURCE = 'compliance-control';
/**
 * The control that reads open critical drift is not itself turned into drift: a critical event
 * would fail it, and its event would keep it failing after the first one cleared.
 */
export const SELF_REFERENTIAL_PREDICATES: ReadonlySet<string> = new Set(['no-open-critical-drift']);

/**
 * compliance-fail: every control whose outcome in force (an override while it holds, else the
 * newest job evaluation) is `fail`. Subject `compliance-control` / `<framework>:<controlId>`,
 * severity the control's. Reads the controls of the shipped frameworks (a few dozen).
 */
export function complianceFailDetector(compliance: ComplianceControlReads): Detector {
  return {
    kind: 'compliance-fail',
    async scan() {
      const breaches: Breach[] = [];
      for (const framework of compliance.frameworkKeys()) {
        const view = await compliance.framework(framework);
        for (const c of view.controls) {
          if (c.latestOutcome !== 'fail' || SELF_REFERENTIAL_PREDICATES.has(c.predicateKey)) continue;
          breaches.push({
            source: COMPLIANCE_CONTROL_SOURCE,
            sourceId: `${framework}:${c.controlId}`,
            severity: c.severity,
            description: `Compliance control ${framework} ${c.controlId} (${c.title}) fails: ${c.latestSummary ?? 'no summary'}`,
            payload: { framework, controlId: c.controlId, predicateKey: c.predicateKey, evaluationId: c.latestEvaluationId, evaluatedBy: c.latestEvaluatedBy },
          });
        }
      }
      return breaches;
    },
  };
}
