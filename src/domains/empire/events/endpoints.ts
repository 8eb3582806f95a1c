import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, StringEnum, V1 } from '../../../platform/http/registry.ts';
import {
  type EventService,
  LINEAGE_DEPTH_DEFAULT,
  LINEAGE_DEPTH_MAX,
  LINEAGE_ROWS_MAX,
  NOTE_COLOR_DESCRIPTION,
  NOTE_COLOR_MAX_LENGTH,
  NOTE_TARGET_KINDS,
} from './service.ts';

/** Lineage and notes of empire events (spec B group 2). */

const generatedAt = '2026-11-24T08:00:00.000Z';
const TAG = 'empire';

const LineageEvent = Type.Object({
  eventId: Type.String({ format: 'uuid' }),
  id: Type.String({ description: 'The toolset\'s own id of the event.' }),
  toolset: Type.String(),
  eventType: Type.String(),
  ts: IsoDate,
  tenant: Nullable(Type.String()),
  causedBy: Nullable(Type.String()),
  receivedAt: IsoDate,
  compatMode: Type.Boolean(),
  depth: Type.Integer({ description: 'Steps from the focal event; 0 for the focal event.' }),
});
const exampleEvent = (n: number, depth: number) => ({
  eventId: `7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0${n}`,
  id: `evt-00012${n}`,
  toolset: 'crawler-lab',
  eventType: ['crawl.started', 'crawl.page', 'crawl.done'][n % 3]!,
  ts: generatedAt,
  tenant: 'docs-mirror',
  causedBy: n === 0 ? null : `evt-00012${n - 1}`,
  receivedAt: generatedAt,
  compatMode: false,
  depth,
});

const Note = Type.Object({
  id: Type.String({ format: 'uuid' }),
  targetKind: StringEnum(NOTE_TARGET_KINDS),
  note: Type.String(),
  pinned: Type.Boolean(),
  color: Nullable(Type.String()),
  userId: Type.String(),
  createdAt: IsoDate,
  updatedAt: IsoDate,
});
const TargetId = Type.String({ minLength: 1, maxLength: 128, description: 'The id of the event (or incident) the note is on.' });
const Tenant = Type.Optional(Type.String({ minLength: 1, maxLength: 128 }));
const TargetKind = Type.Optional(StringEnum(NOTE_TARGET_KINDS, { default: 'event' }));

export function empireEventEndpoints(deps: { events: EventService }): Endpoint[] {
  const { events } = deps;
  return [
    defineEndpoint({
      id: 'empireLineage',
      title: 'Lineage of an empire event',
      description: `Walks causedBy both ways from one event: upstream the chain of causes, nearest first; downstream every event it led to, level by level. Safe against cycles (a walk stops where it closes); at most \`depth\` steps (default ${LINEAGE_DEPTH_DEFAULT}, at most ${LINEAGE_DEPTH_MAX}) and ${LINEAGE_ROWS_MAX} events each way (then truncated). 404 for an unknown event, and for an event of a toolset the token is not bound to.`,
      method: 'GET',
      path: `${V1}/empire/lineage/{eventId}`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/empire/lineage',
      params: Type.Object(
        { eventId: Type.String({ maxLength: 64, description: 'The eventId the ingest answered (a UUID).' }) },
        { examples: [{ eventId: '7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d01' }] },
      ),
      query: Type.Object(
        { depth: Type.Optional(Type.Integer({ minimum: 1, maximum: LINEAGE_DEPTH_MAX, default: LINEAGE_DEPTH_DEFAULT })) },
        { examples: [{ depth: 100 }] },
      ),
      response: {
        schemaId: 'svc-empire-lineage.v1',
        fields: {
          focal: LineageEvent,
          upstream: Type.Array(LineageEvent),
          downstream: Type.Array(LineageEvent),
          depth: Type.Integer({ description: 'The step bound the walk used.' }),
          upstreamTruncated: Type.Boolean(),
          downstreamTruncated: Type.Boolean(),
        },
      },
      example: {
        schema: 'svc-empire-lineage.v1',
        generatedAt,
        focal: exampleEvent(1, 0),
        upstream: [exampleEvent(0, 1)],
        downstream: [exampleEvent(2, 1)],
        depth: LINEAGE_DEPTH_DEFAULT,
        upstreamTruncated: false,
        downstreamTruncated: false,
      },
      handler: async ({ params, query, principal }) => events.lineage(params.eventId, query.depth, principal),
    }),
    defineEndpoint({
      id: 'readEmpireNote',
      title: 'Read the note on an event',
      description: 'The note on an event (or incident), or null when it has none. A token bound to toolsets reads only the notes on its toolsets\' events and incidents (null for any other target).',
      method: 'GET',
      path: `${V1}/empire/notes`,
      auth: 'session-or-bearer',
      scope: 'read:events',
      tag: TAG,
      kind: 'read',
      uiPath: '/empire/incidents',
      query: Type.Object(
        { eventId: Type.String({ ...TargetId, examples: ['7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d01'] }), tenant: Tenant, targetKind: TargetKind },
        { examples: [{ eventId: '7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d01', tenant: 'acme', targetKind: 'event' }] },
      ),
      response: { schemaId: 'svc-empire-note.v1', fields: { eventId: Type.String(), tenant: Nullable(Type.String()), note: Nullable(Note) } },
      example: {
        schema: 'svc-empire-note.v1',
        generatedAt,
        eventId: exampleEvent(1, 0).eventId,
        tenant: null,
        note: { id: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f', targetKind: 'event', note: 'First crawl from the new range; watch it.', pinned: true, color: 'yellow', userId: 'b6a0c1d2-3e4f-4a5b-8c6d-7e8f9a0b1c2d', createdAt: generatedAt, updatedAt: generatedAt },
      },
      handler: async ({ query, principal }) => events.readNote(query, principal),
    }),
    defineEndpoint({
      id: 'upsertEmpireNote',
      title: 'Write the note on an event',
      description: 'Creates or replaces the note on an event (or incident); the caller becomes its userId. Audited as empire.note-upsert. A token bound to toolsets writes notes only on its toolsets\' events and incidents, named by the eventId (or incident id) the service gave them: any other target is 404.',
      method: 'POST',
      path: `${V1}/empire/notes`,
      auth: 'session-or-bearer',
      scope: 'write:tenants',
      tag: TAG,
      kind: 'write',
      uiPath: '/empire/incidents',
      body: Type.Object(
        {
          eventId: TargetId,
          note: Type.String({ minLength: 1, maxLength: 10_000 }),
          pinned: Type.Optional(Type.Boolean({ default: false })),
          color: Type.Optional(Nullable(Type.String({ maxLength: NOTE_COLOR_MAX_LENGTH, description: NOTE_COLOR_DESCRIPTION }))),
          tenant: Tenant,
          targetKind: TargetKind,
        },
        {
          additionalProperties: false,
          examples: [{ eventId: '7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d01', note: 'First crawl from the new range; watch it.', pinned: true, color: 'yellow', tenant: 'acme', targetKind: 'event' }],
        },
      ),
      response: { schemaId: 'svc-empire-note-upsert.v1', fields: { ok: Type.Boolean(), id: Type.String({ format: 'uuid' }), eventId: Type.String(), updatedAt: IsoDate } },
      example: { schema: 'svc-empire-note-upsert.v1', generatedAt, ok: true, id: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f', eventId: exampleEvent(1, 0).eventId, updatedAt: generatedAt },
      handler: async ({ body, principal, requestId }) => events.upsertNote({ principal: principal as Principal, requestId }, body),
    }),
  ];
}
