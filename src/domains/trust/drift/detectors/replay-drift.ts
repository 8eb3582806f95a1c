import type { Breach, Detector } from '../kinds.ts';

/** What replay-drift reads of the empire's event replay. */
export interface EmpireReplayReads {
  mismatches(options: { toolsetsMax: number; perToolset: number; recheck: readonly { toolset: string; eventId: string }[]; now: Date }): Promise<{
    toolsetsScanned: number;
    toolsetsSkipped: number;
    replayed: number;
    mismatches: { toolset: string; eventId: string; senderId: string; fields: { field: string; stored: string | null; replayed: string | null }[] }[];
  }>;
}

/** What replay-drift reads of compliance: the frameworks, the evaluation in force per control, and its replay. */
export interface ComplianceReplayReads {
  frameworkKeys(): readonly string[];
  framework(key: string): Promise<{ controls: { controlId: string; latestEvaluationId: string | null; latestEvaluatedBy: string | null }[] }>;
  replay(evaluationId: string): Promise<{ matches: boolean; digestMatches: boolean; storedOutcome: string; replayedOutcome: string; evaluationId: string }>;
}

export const EMPIRE_EVENT_SOURCE = 'empire-event';
export const COMPLIANCE_EVALUATION_SOURCE = 'compliance-evaluation';
/** Toolsets whose recent events are replayed per scan (by name), and events per toolset. */
export const REPLAY_TOOLSETS_MAX = 50;
export const REPLAY_PER_TOOLSET = 20;

/**
 * replay-drift: stored records whose replay does not reproduce them.
 * - Empire events: the REPLAY_PER_TOOLSET most recently received events of each of the first
 *   REPLAY_TOOLSETS_MAX toolsets, plus every event a held replay-drift event names (so an event
 *   that left the window is still re-checked, not cleared by being out of sight). Subject
 *   `empire-event` / `<toolset>:<eventId>`, major.
 * - Compliance evaluations: the evaluation in force of every control of every framework. A job
 *   evaluation breaches when its replay does not match (outcome, summary or digest); an operator
 *   override (whose free-form input no predicate decides) only when its stored input no longer
 *   hashes to its digest. Subject `compliance-evaluation` / `<framework>:<controlId>`, major.
 */
export function replayDriftDetector(deps: { empire: EmpireReplayReads | null; compliance: ComplianceReplayReads | null }): Detector {
  return {
    kind: 'replay-drift',
    async scan({ now, held }) {
      if (deps.empire === null && deps.compliance === null) throw new Error('neither empire events nor compliance evaluations are part of this deployment');
      const breaches: Breach[] = [];
      if (deps.empire !== null) {
        const recheck = held
          .filter((h) => h.source === EMPIRE_EVENT_SOURCE)
          .map((h) => {
            const at = h.sourceId.lastIndexOf(':');
            return { toolset: h.sourceId.slice(0, at), eventId: h.sourceId.slice(at + 1) };
          })
          .filter((r) => r.toolset.length > 0);
        const scan = await deps.empire.mismatches({ toolsetsMax: REPLAY_TOOLSETS_MAX, perToolset: REPLAY_PER_TOOLSET, recheck, now });
        for (const m of scan.mismatches) {
          breaches.push({
            source: EMPIRE_EVENT_SOURCE,
            sourceId: `${m.toolset}:${m.eventId}`,
            severity: 'major',
            description: `Stored event ${m.senderId} of toolset ${m.toolset} does not replay: ${m.fields.map((f) => `${f.field} stored ${f.stored ?? 'null'}, replayed ${f.replayed ?? 'null'}`).join('; ')}.`,
            payload: { toolset: m.toolset, eventId: m.eventId, senderId: m.senderId, fields: m.fields },
          });
        }
      }
      if (deps.compliance !== null) {
        for (const framework of deps.compliance.frameworkKeys()) {
          const view = await deps.compliance.framework(framework);
          for (const control of view.controls) {
            if (control.latestEvaluationId === null) continue;
            const r = await deps.compliance.replay(control.latestEvaluationId);
            const override = control.latestEvaluatedBy !== 'job';
            if (override ? r.digestMatches : r.matches) continue;
            breaches.push({
              source: COMPLIANCE_EVALUATION_SOURCE,
              sourceId: `${framework}:${control.controlId}`,
              severity: 'major',
              description: r.digestMatches
                ? `The evaluation in force of ${framework} ${control.controlId} (${r.evaluationId}) does not replay: stored ${r.storedOutcome}, replayed ${r.replayedOutcome}.`
                : `The stored input of the evaluation in force of ${framework} ${control.controlId} (${r.evaluationId}) no longer hashes to the digest taken when it was stored.`,
              payload: { framework, controlId: control.controlId, evaluationId: r.evaluationId, storedOutcome: r.storedOutcome, replayedOutcome: r.replayedOutcome, digestMatches: r.digestMatches },
            });
          }
        }
      }
      return breaches;
    },
  };
}
