import type { Clock } from '../../../platform/clock.ts';
import { canonicalJson, sha256Hex } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/db/client.ts';
import { ServiceError } from '../../../platform/errors.ts';
import { V1 } from '../../../platform/http/registry.ts';
import { dropForeignLinks, linkOriginOf } from '../../../platform/llm/links.ts';
import { AGENTS, type AgentStates, type BudgetGate, type ComplianceSnapshot, definitionOf, EMPIRE_BUCKET, latestVersionOf, NarrationSchema, parseNarration, type RunService, STUB_RUN_ID } from '../../triage/index.ts';
import type { ComplianceReads } from '../frameworks/views.ts';
import { scrubNarration } from './scrub.ts';

/**
 * The compliance narrator (spec B `compliance/narrator`; docs/compliance/README.md, "Narrator"): one
 * paragraph of posture for a person, written by the triage agent `compliance-narrator` from each
 * framework's posture and its controls' outcomes in force, then scrubbed (scrub.ts) of every
 * sentence naming a framework or control that input does not hold.
 *
 * `POST` is an agent run like any other: charged to the triage budget's `*` bucket (429
 * `budget-exhausted` while it is spent or degraded), answered by the live model when one is
 * configured and by the built-in template otherwise, and stored with its replay envelope. `GET`
 * forces the built-in template and writes nothing: no run, no agent state.
 */

export const NARRATOR_AGENT = 'compliance-narrator' as const;

/**
 * The toolsets a narrator run records as read: posture spans every toolset, and `*` is no
 * toolset's name, so a credential bound to toolsets never reads the run's replay (its envelope
 * holds the whole posture), as it may not call the narrator.
 */
export const EVERY_TOOLSET = '*';

export type ModelOrStub = 'live' | 'stub';

export interface Narration {
  text: string;
  scrubbedText: string;
  citedFrameworks: string[];
  strippedFrameworks: string[];
  citedControlIds: string[];
  strippedControlIds: string[];
  runId: string;
  modelOrStub: ModelOrStub;
  replayUrl: string | null;
  inputDigest: string;
}

/** The digest of the narrator's input: sha256 of its canonical JSON (RFC 8785), the same JSON the run's data block carries. */
export const inputDigestOf = (snapshot: ComplianceSnapshot) => sha256Hex(canonicalJson(snapshot));

export function createNarratorService(deps: {
  db: Db;
  clock: Clock;
  reads: ComplianceReads;
  triage: { runs: RunService; agents: AgentStates; budget: BudgetGate };
  /** OBSERVATORY_PUBLIC_URL: replay links are absolute, and only its origin may be linked to. */
  publicUrl: string;
}) {
  const { db, clock, reads, triage, publicUrl } = deps;
  const linkOrigin = linkOriginOf(publicUrl);

  /**
   * The input: the posture, and each framework's controls with the outcome in force. The counts
   * are the posture's own, so the paragraph says what the posture page shows.
   */
  async function snapshotOf(): Promise<ComplianceSnapshot> {
    const posture = await reads.posture();
    const frameworks = await Promise.all(
      posture.map(async (p) => {
        const view = await reads.framework(p.framework);
        return {
          framework: p.framework,
          title: p.title,
          version: p.version,
          totalControls: p.totalControls,
          passing: p.passing,
          failing: p.failing,
          manualReview: p.manualReview,
          nA: p.nA,
          asOf: p.asOf,
          badge: p.badge,
          ratePct: p.ratePct,
          controls: view.controls.map((c) => ({
            controlId: c.controlId,
            title: c.title,
            severity: c.severity,
            outcome: c.latestOutcome,
            summary: c.latestSummary,
            override: c.latestEvaluatedBy?.startsWith('operator:') ?? false,
          })),
        };
      }),
    );
    return { frameworks };
  }

  function answer(paragraph: string, snapshot: ComplianceSnapshot, run: { runId: string; modelOrStub: ModelOrStub; replayUrl: string | null }): Narration {
    const scrubbed = scrubNarration(dropForeignLinks(paragraph, linkOrigin).text, {
      frameworks: snapshot.frameworks.map((f) => f.framework),
      controlIds: snapshot.frameworks.flatMap((f) => f.controls.map((c) => c.controlId)),
    });
    return {
      text: scrubbed.text,
      scrubbedText: scrubbed.scrubbedText,
      citedFrameworks: scrubbed.citedFrameworks,
      strippedFrameworks: scrubbed.strippedFrameworks,
      citedControlIds: scrubbed.citedControlIds,
      strippedControlIds: scrubbed.strippedControlIds,
      ...run,
      inputDigest: inputDigestOf(snapshot),
    };
  }

  return {
    snapshotOf,

    /** Spec B `POST compliance/narrator`: a recorded, replayable agent run. */
    async narrate(): Promise<Narration> {
      await triage.budget.assertRuns(NARRATOR_AGENT, EMPIRE_BUCKET, clock.now());
      const version = await triage.agents.active(NARRATOR_AGENT);
      const definition = definitionOf(NARRATOR_AGENT, version);
      const snapshot = await snapshotOf();
      const outcome = await triage.runs.callModel({
        agent: NARRATOR_AGENT,
        version,
        bucket: EMPIRE_BUCKET,
        toolsets: [EVERY_TOOLSET],
        window: null,
        params: {},
        snapshot,
        schemaName: 'compliance_narration',
        schema: NarrationSchema,
        builtin: () => AGENTS[NARRATOR_AGENT].builtin(snapshot, definition.params as never),
      });
      const parsed = parseNarration(outcome.answer.text);
      if (!parsed.ok) {
        await triage.runs.saveRun(db, { ...outcome.run, autoRejected: 1 });
        throw new ServiceError(502, 'model-output-invalid', `The compliance narrator's answer was refused (${parsed.reason}); nothing was kept but run ${outcome.runId}, whose replay holds the text.`, { runId: outcome.runId });
      }
      await triage.runs.saveRun(db, outcome.run);
      return answer(parsed.value.paragraph, snapshot, {
        runId: outcome.runId,
        modelOrStub: outcome.answer.engine === 'live' ? 'live' : 'stub',
        replayUrl: `${publicUrl}${V1}/empire/triage/replay/${outcome.runId}`,
      });
    },

    /**
     * Spec B `GET compliance/narrator`: the built-in template over the same input, nothing
     * written. It runs the newest version this instance ships rather than reading the agent's
     * state, which would create it on first use (the narrator proposes nothing, so no rollback
     * ever moves it off its newest version).
     */
    async template(): Promise<Narration> {
      const snapshot = await snapshotOf();
      const definition = definitionOf(NARRATOR_AGENT, latestVersionOf(NARRATOR_AGENT));
      const { paragraph } = AGENTS[NARRATOR_AGENT].builtin(snapshot, definition.params as never);
      return answer(paragraph, snapshot, { runId: STUB_RUN_ID, modelOrStub: 'stub', replayUrl: null });
    },
  };
}

export type NarratorService = ReturnType<typeof createNarratorService>;
