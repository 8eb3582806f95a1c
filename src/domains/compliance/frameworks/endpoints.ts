import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { OUTCOMES, SEVERITIES } from './catalogue.ts';
import { BADGES, type ComplianceReads } from './views.ts';

/** The framework read and the posture (spec B group 4; docs/compliance/README.md). */

const generatedAt = '2026-11-28T04:11:02.000Z';
export const COMPLIANCE_TAG = 'compliance';
/** Posture and controls are over every toolset's data; completes "… spans every toolset" (docs/operations.md, "Toolset binding"). */
export const POSTURE_SPANS = 'compliance posture, which is evaluated over the whole deployment';

export const ControlView = Type.Object({
  id: Type.String({ description: '`<framework>/<controlId>`, unique across frameworks.' }),
  controlId: Type.String({ description: 'The control\'s id in its framework (SOC 2 `CC6.1`, ISO/IEC 27001 `A.8.13`).' }),
  category: Type.String(),
  title: Type.String(),
  description: Type.String({ description: 'The criterion, then what this service checks for it ("Here: …").' }),
  predicateKey: Type.String({ description: 'The predicate that decides it (docs/compliance/README.md lists them).' }),
  severity: StringEnum(SEVERITIES),
  latestOutcome: Nullable(StringEnum(OUTCOMES, { description: 'The outcome in force: an open override, else the newest evaluation; null before the first.' })),
  latestRunAt: Nullable(IsoDate),
  latestSummary: Nullable(Type.String()),
  latestEvaluationId: Nullable(Type.String({ format: 'uuid' })),
  latestEvaluatedBy: Nullable(Type.String({ description: '`job`, or `operator:<userId>` while an override is in force.' })),
  latestEvidenceUrl: Nullable(Type.String({ description: 'Where the evidence is read (an API URL).' })),
});

const exampleControl = {
  id: 'soc2/A1.2',
  controlId: 'A1.2',
  category: 'Availability',
  title: 'Backup processes and recovery infrastructure',
  description: 'The entity authorizes, designs, develops or acquires, implements, operates, approves, maintains, and monitors environmental protections, software, data back-up processes, and recovery infrastructure to meet its objectives. Here: a backup snapshot was restored and verified ok in the last 7 days.',
  predicateKey: 'restore-verified-7d',
  severity: 'critical',
  latestOutcome: 'pass',
  latestRunAt: '2026-11-28T04:11:00.000Z',
  latestSummary: 'The last restore verification that ended ok (observatory, snapshot 9d1c7a52-6e0b-4c3f-a8d2-3b4e5f6a7b8c) was at 2026-11-28T03:30:41.000Z, within 7 days.',
  latestEvaluationId: '7f3e2d1c-0b9a-4877-8665-544332211000',
  latestEvaluatedBy: 'job',
  latestEvidenceUrl: 'http://localhost:8080/api/observatory/v1/backups/ladder',
};

export const PostureRow = Type.Object({
  framework: Type.String(),
  title: Type.String(),
  version: Type.String(),
  totalControls: Type.Integer({ minimum: 0 }),
  passing: Type.Integer({ minimum: 0 }),
  failing: Type.Integer({ minimum: 0 }),
  manualReview: Type.Integer({ minimum: 0 }),
  nA: Type.Integer({ minimum: 0 }),
  asOf: Nullable(IsoDate),
  badge: StringEnum(BADGES, {
    description:
      'Over the controls that apply (total − nA): unknown before any evaluation or when none applies; red when a critical control fails or fewer than 80% pass; yellow when another control fails; manual-review when none fails and some await an operator (or were never evaluated); green when all pass.',
  }),
  ratePct: Nullable(Type.Number({ description: 'passing / (totalControls − nA), percent with one decimal; null when no control applies.' })),
});

export function frameworkEndpoints(reads: ComplianceReads): Endpoint[] {
  return [
    defineEndpoint({
      id: 'getComplianceFramework',
      title: 'Read a compliance framework',
      description:
        'A framework (`soc2` or `iso27001`) with every control and the evaluation in force for it: an operator override while it holds, else the newest evaluation of the hourly compliance-evaluate job. Unknown framework: 404. A token bound to toolsets is refused (403): posture spans every toolset.',
      method: 'GET',
      path: `${V1}/compliance/frameworks/{framework}`,
      auth: 'session-or-bearer',
      spansEveryToolset: POSTURE_SPANS,
      scope: 'read:empire',
      tag: COMPLIANCE_TAG,
      kind: 'read',
      uiPath: '/compliance/controls',
      params: Type.Object({ framework: Type.String({ pattern: '^[a-z0-9-]{1,32}$', description: '`soc2` or `iso27001`.' }) }, { examples: [{ framework: 'soc2' }] }),
      response: {
        schemaId: 'svc-compliance-framework.v1',
        fields: { framework: Type.String(), title: Type.String(), version: Type.String(), status: Type.String(), controls: Type.Array(ControlView) },
      },
      example: {
        schema: 'svc-compliance-framework.v1',
        generatedAt,
        framework: 'soc2',
        title: 'SOC 2 Trust Services Criteria (subset)',
        version: 'TSC 2017, points of focus revised 2022',
        status: 'active',
        controls: [exampleControl],
      },
      handler: async ({ params }) => reads.framework(params.framework),
    }),
    defineEndpoint({
      id: 'getCompliancePosture',
      title: 'Compliance posture',
      description:
        'Per framework: controls in all, passing, failing, awaiting manual review and not applicable, as of the newest evaluation, with a badge (cut-offs in the badge field and docs/compliance/README.md) and the pass rate over the controls that apply. A token bound to toolsets is refused (403).',
      method: 'GET',
      path: `${V1}/compliance/posture`,
      auth: 'session-or-bearer',
      spansEveryToolset: POSTURE_SPANS,
      scope: 'read:empire',
      tag: COMPLIANCE_TAG,
      kind: 'read',
      uiPath: '/compliance',
      response: { schemaId: 'svc-compliance-posture.v1', fields: { frameworks: Type.Array(PostureRow) } },
      example: {
        schema: 'svc-compliance-posture.v1',
        generatedAt,
        frameworks: [
          { framework: 'soc2', title: 'SOC 2 Trust Services Criteria (subset)', version: 'TSC 2017, points of focus revised 2022', totalControls: 13, passing: 8, failing: 1, manualReview: 1, nA: 3, asOf: '2026-11-28T04:11:00.000Z', badge: 'yellow', ratePct: 80 },
          { framework: 'iso27001', title: 'ISO/IEC 27001:2022 Annex A (subset)', version: '2022', totalControls: 13, passing: 8, failing: 1, manualReview: 1, nA: 3, asOf: '2026-11-28T04:11:00.000Z', badge: 'yellow', ratePct: 80 },
        ],
      },
      handler: async () => ({ frameworks: await reads.posture() }),
    }),
  ];
}
