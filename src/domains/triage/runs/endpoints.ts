import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { EXAMPLE_PROPOSAL_ID, EXAMPLE_RUN_ID, generatedAt, TAG, UI_RUNS } from '../schemas.ts';
import type { RunService } from './service.ts';

/** A triage run's replay envelope (spec B `GET triage/replay/{runId}`; docs/triage/README.md, "Replay"). */
export function runEndpoints(deps: { runs: RunService }): Endpoint[] {
  const userMessage = '{"crossToolset":[],"honeypot":[],"openIncidents":[],"toolsets":[],"windowEnd":"2026-11-26T08:00:00.000Z","windowMinutes":15,"windowStart":"2026-11-26T07:45:00.000Z"}';
  return [
    defineEndpoint({
      id: 'replayTriageRun',
      title: 'Replay a triage run',
      description:
        'The stored envelope of one agent run: the system prompt\'s hash, the user message and the model\'s text as they were, token counts and the proposals it made. `digest` is SHA-256 over the canonical JSON of {schemaVersion, systemPromptHash, userMessage, modelText}; every fetch returns the same bytes, and `matches` says whether the stored parts still hash to it. ' +
        'A token bound to toolsets reads only runs whose input held nothing but its toolsets. 404 for an unknown run (the stub run id is never stored).',
      method: 'GET',
      path: `${V1}/empire/triage/replay/{runId}`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_RUNS,
      params: Type.Object({ runId: Type.String({ maxLength: 64 }) }, { examples: [{ runId: EXAMPLE_RUN_ID }] }),
      response: {
        schemaId: 'svc-triage-replay.v1',
        fields: {
          runId: Type.String({ format: 'uuid' }),
          digest: Type.String({ pattern: '^[0-9a-f]{64}$' }),
          recomputedDigest: Type.String({ pattern: '^[0-9a-f]{64}$' }),
          matches: Type.Boolean(),
          schemaVersion: Type.Integer(),
          agent: Type.String(),
          agentVersion: Type.String(),
          engine: StringEnum(['builtin', 'live'] as const),
          model: Type.String(),
          outcome: StringEnum(['ok', 'error'] as const),
          errorText: Nullable(Type.String()),
          systemPromptHash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
          userMessageBytes: Type.Integer(),
          llmResponseBytes: Type.Integer(),
          userMessage: Type.String({ description: 'The user message sent: canonical JSON of what the agent read.' }),
          llmResponse: Type.String({ description: 'The text the engine answered, as it was.' }),
          promptTokens: Type.Integer(),
          completionTokens: Type.Integer(),
          proposalIds: Type.Array(Type.String({ format: 'uuid' })),
          startedAt: IsoDate,
          finishedAt: IsoDate,
        },
      },
      example: {
        schema: 'svc-triage-replay.v1',
        generatedAt,
        runId: EXAMPLE_RUN_ID,
        digest: '3b6f0c1e9a4d2b7c8e5f1a0d9c3b6e2f7a4d1c8b5e2f9a6d3c0b7e4f1a8d5c2b',
        recomputedDigest: '3b6f0c1e9a4d2b7c8e5f1a0d9c3b6e2f7a4d1c8b5e2f9a6d3c0b7e4f1a8d5c2b',
        matches: true,
        schemaVersion: 1,
        agent: 'incident-classifier',
        agentVersion: 'incident-classifier@1.1.0',
        engine: 'builtin',
        model: 'builtin',
        outcome: 'ok',
        errorText: null,
        systemPromptHash: '9f2c4e6a8b0d1f3e5a7c9b1d3f5e7a9c0b2d4f6e8a0c2e4b6d8f0a2c4e6b8d0f',
        userMessageBytes: Buffer.byteLength(userMessage),
        llmResponseBytes: 15,
        userMessage,
        llmResponse: '{"proposals":[]}',
        promptTokens: 0,
        completionTokens: 0,
        proposalIds: [EXAMPLE_PROPOSAL_ID],
        startedAt: '2026-11-26T08:00:00.000Z',
        finishedAt: '2026-11-26T08:00:00.041Z',
      },
      handler: async ({ params, principal }) => deps.runs.replay(params.runId, principal?.toolsets ?? null),
    }),
  ];
}
