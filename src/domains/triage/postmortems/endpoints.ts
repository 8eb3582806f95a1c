import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { Draft, EXAMPLE_EVENT_ID, EXAMPLE_INCIDENT_ID, EXAMPLE_RUN_ID, exampleDraft, generatedAt, MODEL_CALL, TAG, UI_POSTMORTEMS } from '../schemas.ts';
import type { PostmortemService } from './service.ts';

/** Incident postmortems (spec B `incidents/{id}/auto-draft`; docs/triage/README.md, "Postmortems"). */
export function postmortemEndpoints(deps: { postmortems: PostmortemService }): Endpoint[] {
  const Params = Type.Object({ id: Type.String({ maxLength: 64 }) }, { examples: [{ id: EXAMPLE_INCIDENT_ID }] });
  return [
    defineEndpoint({
      id: 'autoDraftIncidentPostmortem',
      title: 'Draft an incident postmortem',
      description:
        'The postmortem writer drafts five sections (summary, timeline, impact, rootCause, actionItems) from the incident and its lineage (its events and every event their causedBy chains reach). Every claim citing an event id outside that lineage, or naming an identifier the writer\'s input does not hold (in any spelling), is removed from `draft` and the identifier listed in `strippedEventIds`; links that leave this service are dropped; `rawDraft` is the writer\'s text as it was. ' +
        '`persist: true` stores the draft as the incident\'s postmortem (audited as `empire-incident.postmortem`). `stub: true` returns an empty draft and writes nothing. Charged to the incident\'s toolset bucket; deferred (429 `budget-exhausted`) at or over budget. 404 for an unknown incident.',
      method: 'POST',
      path: `${V1}/empire/incidents/{id}/auto-draft`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_POSTMORTEMS,
      ...MODEL_CALL,
      errors: [404, 429, 502],
      params: Params,
      body: Type.Object(
        { operatorNotes: Type.Optional(Type.String({ maxLength: 4000 })), persist: Type.Optional(Type.Boolean({ default: false })), stub: Type.Optional(Type.Boolean({ default: false })) },
        { additionalProperties: false, examples: [{ operatorNotes: 'The crawl schedule changed at 07:45.', persist: true, stub: false }] },
      ),
      response: {
        schemaId: 'svc-empire-incident-auto-draft.v1',
        fields: {
          ok: Type.Boolean(),
          id: Type.String({ format: 'uuid' }),
          runId: Type.String({ format: 'uuid' }),
          draft: Draft,
          rawDraft: Type.String({ description: 'The writer\'s answer as it was (JSON text), before stripping.' }),
          citedEventIds: Type.Array(Type.String()),
          strippedEventIds: Type.Array(Type.String()),
          persisted: Type.Boolean(),
        },
      },
      example: {
        schema: 'svc-empire-incident-auto-draft.v1',
        generatedAt,
        ok: true,
        id: EXAMPLE_INCIDENT_ID,
        runId: EXAMPLE_RUN_ID,
        draft: exampleDraft,
        rawDraft: JSON.stringify(exampleDraft),
        citedEventIds: [EXAMPLE_EVENT_ID],
        strippedEventIds: [],
        persisted: true,
      },
      handler: async ({ params, body, principal, requestId }) => deps.postmortems.autoDraft({ principal: principal as Principal, requestId }, params.id, body),
    }),
    defineEndpoint({
      id: 'readIncidentPostmortem',
      title: 'Read an incident postmortem',
      description: 'The stored postmortem of an incident (seeded when an incident proposal is accepted, replaced by a persisted auto-draft), or null. 404 for an unknown incident.',
      method: 'GET',
      path: `${V1}/empire/incidents/{id}/postmortem`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_POSTMORTEMS,
      params: Params,
      response: {
        schemaId: 'svc-empire-incident-postmortem.v1',
        fields: {
          incidentId: Type.String({ format: 'uuid' }),
          postmortem: Nullable(
            Type.Object({
              draft: Draft,
              source: StringEnum(['proposal', 'auto-draft'] as const),
              runId: Nullable(Type.String({ format: 'uuid' })),
              strippedEventIds: Type.Array(Type.String()),
              updatedAt: IsoDate,
              updatedBy: Type.String(),
            }),
          ),
        },
      },
      example: {
        schema: 'svc-empire-incident-postmortem.v1',
        generatedAt,
        incidentId: EXAMPLE_INCIDENT_ID,
        postmortem: { draft: exampleDraft, source: 'auto-draft', runId: EXAMPLE_RUN_ID, strippedEventIds: [], updatedAt: generatedAt, updatedBy: 'b6a0c1d2-3e4f-4a5b-8c6d-7e8f9a0b1c2d' },
      },
      handler: async ({ params, principal, requestId }) => deps.postmortems.read({ principal: principal as Principal, requestId }, params.id),
    }),
  ];
}
