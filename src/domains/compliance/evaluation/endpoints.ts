import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { OUTCOMES } from '../frameworks/catalogue.ts';
import { COMPLIANCE_TAG, POSTURE_SPANS } from '../frameworks/endpoints.ts';
import { type EvaluationService, NOTE_MAX } from './service.ts';

/** Overrides and replay (spec B group 4; docs/compliance/README.md, "Overrides" and "Replay"). */

const generatedAt = '2026-11-28T04:20:00.000Z';
const UI_PATH = '/compliance/controls';

export function evaluationEndpoints(evaluations: EvaluationService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'overrideComplianceControl',
      title: 'Override a control\'s outcome',
      description:
        'Stores an evaluation of the control by `operator:<userId>` with the note, audited as `compliance.override` and chained as a compliance fact. It is the outcome in force (framework read, posture) until an automatic evaluation gives the control an outcome other than the one it overrode, or another override replaces it. `controlId` is the control\'s id (`soc2/CC6.1`) or its controlId (`CC6.1`) with `framework` when two frameworks share it (400 `ambiguous-control`); unknown: 404. `observed` (optional JSON, at most 16 KiB) is kept as the override\'s evidence. A token bound to toolsets is refused (403).',
      method: 'POST',
      path: `${V1}/compliance/override`,
      auth: 'session-or-bearer',
      spansEveryToolset: POSTURE_SPANS,
      scope: 'write:alerts',
      tag: COMPLIANCE_TAG,
      kind: 'write',
      uiPath: UI_PATH,
      body: Type.Object(
        {
          controlId: Type.String({ minLength: 1, maxLength: 80, description: '`soc2/CC9.2`, or `CC9.2`.' }),
          framework: Type.Optional(Type.String({ pattern: '^[a-z0-9-]{1,32}$', description: 'Which framework a bare controlId is in.' })),
          outcome: StringEnum(OUTCOMES),
          note: Type.String({ minLength: 1, maxLength: NOTE_MAX, description: 'Why (shown in the summary).' }),
          observed: Type.Optional(Type.Unknown({ description: 'Evidence the operator relied on (JSON, at most 16 KiB).' })),
        },
        {
          additionalProperties: false,
          examples: [
            {
              controlId: 'CC9.2',
              framework: 'soc2',
              outcome: 'pass',
              note: 'Vendor reviews are kept in the procurement system; reviewed 2026-11-20.',
              observed: { ticket: 'PROC-1182', reviewedAt: '2026-11-20' },
            },
          ],
        },
      ),
      response: { schemaId: 'svc-compliance-override.v1', fields: { ok: Type.Literal(true), evaluationId: Type.String({ format: 'uuid' }) } },
      example: { schema: 'svc-compliance-override.v1', generatedAt, ok: true, evaluationId: '0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5' },
      handler: async ({ body, principal, requestId }) => evaluations.override({ principal: principal!, requestId }, body),
    }),
    defineEndpoint({
      id: 'replayComplianceEvaluation',
      title: 'Replay a compliance evaluation',
      description:
        'Recomputes a stored evaluation\'s outcome and summary from its own `observed` payload with the predicate this version ships, and checks that payload against the SHA-256 taken when it was stored (`digestMatches`; the audit fact holds the same digest). `matches` is true when the digest, outcome and summary all agree. An integrity check of the stored input, not a live re-evaluation. An override\'s replay reads its operator-supplied `observed`, which a predicate cannot decide (`manual-review`). Unknown id: 404. A token bound to toolsets is refused (403).',
      method: 'GET',
      path: `${V1}/compliance/replay/{evaluationId}`,
      auth: 'session-or-bearer',
      spansEveryToolset: POSTURE_SPANS,
      scope: 'read:empire',
      tag: COMPLIANCE_TAG,
      kind: 'read',
      uiPath: UI_PATH,
      params: Type.Object({ evaluationId: Type.String({ format: 'uuid' }) }, { examples: [{ evaluationId: '7f3e2d1c-0b9a-4877-8665-544332211000' }] }),
      response: {
        schemaId: 'svc-compliance-replay.v1',
        fields: {
          evaluationId: Type.String({ format: 'uuid' }),
          framework: Type.String(),
          controlId: Type.String(),
          predicateKey: Type.String(),
          evaluatedBy: Type.String({ description: '`job` or `operator:<userId>`.' }),
          storedOutcome: StringEnum(OUTCOMES),
          replayedOutcome: StringEnum(OUTCOMES),
          matches: Type.Boolean(),
          runAt: IsoDate,
          storedSummary: Type.String(),
          replayedSummary: Type.String(),
          observed: Type.Unknown({ description: 'The stored input, as stored.' }),
          observedSha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the RFC 8785 canonical JSON of observed, taken when the evaluation was stored.' }),
          digestMatches: Type.Boolean({ description: 'The stored observed still hashes to observedSha256.' }),
        },
      },
      example: {
        schema: 'svc-compliance-replay.v1',
        generatedAt,
        evaluationId: '7f3e2d1c-0b9a-4877-8665-544332211000',
        framework: 'soc2',
        controlId: 'CC6.6',
        predicateKey: 'outbound-private-addresses-blocked',
        evaluatedBy: 'job',
        storedOutcome: 'pass',
        replayedOutcome: 'pass',
        matches: true,
        runAt: '2026-11-28T04:11:00.000Z',
        storedSummary: 'Webhooks and other outbound destinations are refused private, loopback and link-local addresses (OBSERVATORY_ALLOW_PRIVATE_OUTBOUND is off).',
        replayedSummary: 'Webhooks and other outbound destinations are refused private, loopback and link-local addresses (OBSERVATORY_ALLOW_PRIVATE_OUTBOUND is off).',
        observed: { asOf: '2026-11-28T04:11:00.000Z', allowPrivateOutbound: false },
        observedSha256: '3f5a1c2b9d8e7f60a1b2c3d4e5f60718293a4b5c6d7e8f9001a2b3c4d5e6f708',
        digestMatches: true,
      },
      handler: async ({ params }) => evaluations.replay(params.evaluationId),
    }),
  ];
}
