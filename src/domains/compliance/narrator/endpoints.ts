import { Type } from '@sinclair/typebox';
import { defineEndpoint, EmptyBody, type Endpoint, Nullable, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { MODEL_CALL, STUB_RUN_ID } from '../../triage/index.ts';
import { COMPLIANCE_TAG, POSTURE_SPANS } from '../frameworks/endpoints.ts';
import type { NarratorService } from './service.ts';

/** The compliance narrator (spec B `compliance/narrator`; docs/compliance/README.md, "Narrator"). */

const generatedAt = '2026-11-28T04:30:00.000Z';
const UI_PATH = '/compliance/narrator';
const EXAMPLE_RUN_ID = '5e4d3c2b-1a09-4f8e-9d7c-6b5a49382716';

const fields = {
  text: Type.String({ description: 'The paragraph: the sentences kept, joined by single spaces.' }),
  scrubbedText: Type.String({ description: 'The sentences removed for naming a framework or control the input does not hold, joined; "" when none was.' }),
  citedFrameworks: Type.Array(Type.String(), { description: 'Keys of the input\'s frameworks the kept sentences name, sorted.' }),
  strippedFrameworks: Type.Array(Type.String(), { description: 'Frameworks named but not in the input (canonical keys: `hipaa`, `pci-dss`, `nist-800-53` …), sorted.' }),
  citedControlIds: Type.Array(Type.String(), { description: 'Control ids of the input the kept sentences name, sorted.' }),
  strippedControlIds: Type.Array(Type.String(), { description: 'Control ids named but not in the input (upper case: `CC9.9`, `A.9.4`, `AC-2`), sorted.' }),
  runId: Type.String({ format: 'uuid', description: `The triage run that wrote the paragraph; ${STUB_RUN_ID} for the GET form, which records no run.` }),
  modelOrStub: StringEnum(['live', 'stub'] as const, { description: '`live` when the configured model wrote it; `stub` when the built-in template did.' }),
  replayUrl: Nullable(Type.String({ description: 'The run\'s replay envelope (`GET {v1}/empire/triage/replay/{runId}`); null for the GET form.' })),
  inputDigest: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the canonical JSON (RFC 8785) of the narrator\'s input: the posture and every control\'s outcome in force.' }),
};

const exampleText =
  'Across 2 evaluated frameworks, 19 of 22 applicable controls pass, 1 fails and 2 await manual review. ' +
  'SOC 2 Trust Services Criteria (subset) (badge yellow, as of 2026-11-28T04:11:00.000Z): 9 of 10 applicable controls pass (90%); 1 fails, 0 await manual review and 3 do not apply. ' +
  'ISO/IEC 27001:2022 Annex A (subset) (badge manual-review, as of 2026-11-28T04:11:00.000Z): 10 of 12 applicable controls pass (83.3%); 0 fail, 2 await manual review and 1 does not apply. ' +
  'CC6.3 Access modification and removal (major) fails: 2 live tokens of 5 went unused for more than 90 days and never expire: ci-old, reporting. Revoke them. ' +
  'A.5.22 Monitoring, review and change management of supplier services (major) awaits manual review: No subprocessor is registered: register those the service uses (POST {v1}/compliance/subprocessors), or confirm it uses none. ' +
  'These outcomes come from automated checks of the live system, not from an audit.';

const example = (over: Record<string, unknown>) => ({
  schema: 'svc-compliance-narrator.v1',
  generatedAt,
  text: exampleText,
  scrubbedText: '',
  citedFrameworks: ['iso27001', 'soc2'],
  strippedFrameworks: [],
  citedControlIds: ['A.5.22', 'CC6.3'],
  strippedControlIds: [],
  runId: EXAMPLE_RUN_ID,
  modelOrStub: 'stub',
  replayUrl: `http://localhost:8080${V1}/empire/triage/replay/${EXAMPLE_RUN_ID}`,
  inputDigest: '3b9f0c6e2d4a58e1f7c2b9a0d6e4f3c1a8b7d5e2f0c9a6b3d1e8f7a4c2b5d9e0',
  ...over,
});

const SCRUB =
  'Every sentence naming a framework (SOC 2, ISO 27001, HIPAA, PCI DSS, NIST …, by name or key) or a control id (`CC6.1`, `A.8.13`, `AC-2` …) that the input does not hold is removed and reported in `scrubbedText`, its names in `strippedFrameworks`/`strippedControlIds`; links that leave this service are dropped. ';

export function narratorEndpoints(narrator: NarratorService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'narrateCompliance',
      title: 'Narrate the compliance posture',
      description:
        'One paragraph on the compliance posture for a person, written by the triage agent `compliance-narrator` from each framework\'s posture and every control\'s outcome in force (sent to the model as a data block its prompt declares to be data): by the configured model (`modelOrStub: live`), else by the built-in template (`stub`). ' +
        SCRUB +
        'The run is recorded and replayable at `replayUrl`, and charged to the model budget\'s `*` bucket: deferred (429 `budget-exhausted`, with Retry-After) while that bucket is spent or degraded. A model answer that is not `{"paragraph": string}` is 502 `model-output-invalid` (the run keeps its text); a model that does not answer is 502 `model-unavailable`. ' +
        'A token bound to toolsets is refused (403): posture spans every toolset.',
      method: 'POST',
      path: `${V1}/compliance/narrator`,
      auth: 'session-or-bearer',
      spansEveryToolset: POSTURE_SPANS,
      scope: 'read:empire',
      tag: COMPLIANCE_TAG,
      kind: 'write',
      uiPath: UI_PATH,
      ...MODEL_CALL,
      errors: [429, 502],
      body: EmptyBody,
      response: { schemaId: 'svc-compliance-narrator.v1', fields },
      example: example({}),
      handler: async () => narrator.narrate(),
    }),
    defineEndpoint({
      id: 'readComplianceNarration',
      title: 'Narrate the compliance posture (built-in template)',
      description:
        'The same paragraph and scrub as `POST {v1}/compliance/narrator`, always from the deterministic built-in template (`modelOrStub: stub`), whether a model is configured or not; it records no run and writes nothing (`runId` is the fixed stub id, `replayUrl` null) and is never deferred by the budget. The same posture gives the same text and `inputDigest`. ' +
        'A token bound to toolsets is refused (403): posture spans every toolset.',
      method: 'GET',
      path: `${V1}/compliance/narrator`,
      auth: 'session-or-bearer',
      spansEveryToolset: POSTURE_SPANS,
      scope: 'read:empire',
      tag: COMPLIANCE_TAG,
      kind: 'read',
      uiPath: UI_PATH,
      response: { schemaId: 'svc-compliance-narrator.v1', fields },
      example: example({ runId: STUB_RUN_ID, replayUrl: null }),
      handler: async () => narrator.template(),
    }),
  ];
}
