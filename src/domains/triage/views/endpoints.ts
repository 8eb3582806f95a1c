import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, PageLimitParam, TimeCursorParam, V1 } from '../../../platform/http/registry.ts';
import { EXAMPLE_PROPOSAL_ID, generatedAt, TAG, UI_PATH } from '../schemas.ts';
import { type SavedViewService, VIEWS_LIMIT_DEFAULT, VIEWS_LIMIT_MAX } from './service.ts';

/** Saved investigation views, made by accepting investigation proposals (docs/triage/README.md, "Decisions"). */
export function savedViewEndpoints(deps: { views: SavedViewService }): Endpoint[] {
  const NullableString = Nullable(Type.String());
  const SavedView = Type.Object({
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    toolset: NullableString,
    rationale: Type.Array(Type.String()),
    filters: Type.Object({
      toolset: NullableString,
      tenant: NullableString,
      eventType: NullableString,
      uaClass: NullableString,
      fingerprintId: NullableString,
      focalEventId: NullableString,
      from: Type.String(),
      to: Type.String(),
    }),
    proposalId: Type.String({ format: 'uuid' }),
    createdBy: Type.String(),
    createdAt: IsoDate,
  });
  const example = {
    id: '2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f',
    name: 'LIAR cluster on edge-eu',
    toolset: 'honeypot',
    rationale: ['180 LIAR events in 15 minutes.', '4 fingerprints share one JA4.', 'Two tarpits were triggered.'],
    filters: { toolset: 'honeypot', tenant: 'edge-eu', eventType: null, uaClass: 'LIAR', fingerprintId: null, focalEventId: null, from: '2026-11-26T07:45:00.000Z', to: '2026-11-26T08:00:00.000Z' },
    proposalId: EXAMPLE_PROPOSAL_ID,
    createdBy: 'b6a0c1d2-3e4f-4a5b-8c6d-7e8f9a0b1c2d',
    createdAt: generatedAt,
  };
  return [
    defineEndpoint({
      id: 'listSavedViews',
      title: 'List saved views',
      description: 'Saved investigation views, newest first, with a cursor. A token bound to toolsets sees its toolsets\' views only.',
      method: 'GET',
      path: `${V1}/empire/saved-views`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      query: Type.Object({ cursor: TimeCursorParam, limit: PageLimitParam(VIEWS_LIMIT_DEFAULT, VIEWS_LIMIT_MAX) }, { examples: [{ cursor: '2026-11-26T12:00:00.000Z', limit: 50 }] }),
      response: { schemaId: 'svc-empire-saved-views.v1', fields: { views: Type.Array(SavedView), nextCursor: Nullable(Type.String()) } },
      example: { schema: 'svc-empire-saved-views.v1', generatedAt, views: [example], nextCursor: null },
      handler: async ({ query, principal }) => deps.views.list(principal, query),
    }),
    defineEndpoint({
      id: 'readSavedView',
      title: 'Read a saved view',
      description: 'One saved view. 404 for an unknown id.',
      method: 'GET',
      path: `${V1}/empire/saved-views/{id}`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { examples: [{ id: example.id }] }),
      response: { schemaId: 'svc-empire-saved-view.v1', fields: { view: SavedView } },
      example: { schema: 'svc-empire-saved-view.v1', generatedAt, view: example },
      handler: async ({ params, principal }) => deps.views.read(principal, params.id),
    }),
  ];
}
