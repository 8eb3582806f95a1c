import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import { defineEndpoint, type Endpoint, Nullable, StringEnum } from '../../platform/http/registry.ts';
import { EmpireIngestBody, type EmpireIngest, type EmpireIngestResult } from './ingest.ts';

const generatedAt = '2026-11-24T08:00:00.000Z';
export const EMPIRE_INGEST_PATH = '/api/observatory/empire/ingest';

/** What the ingest sample of a request needs once the answer is out. */
const answered = new WeakMap<FastifyRequest, { result: EmpireIngestResult; receivedAt: Date }>();

/** The outcome an empire ingest request is sampled with for the SLO (docs/empire.md). */
export function sampleOutcome(status: number, result: EmpireIngestResult | undefined, errorReason: string | undefined): string {
  if (status === 200) return result && result.rejected > 0 ? 'rejected-events' : 'ok';
  return errorReason ?? `http-${status}`;
}

export function empireIngestEndpoints(deps: { ingest: EmpireIngest; clock: Clock }): Endpoint[] {
  const { ingest, clock } = deps;
  return [
    defineEndpoint({
      id: 'empireIngest',
      title: 'Ingest toolset events',
      description:
        'A toolset sends up to 500 events (spec D4). Each signed event is verified with Ed25519 against the toolset\'s provenance keys over its RFC 8785 canonical bytes; unsigned events are admitted in compatibility mode unless OBSERVATORY_REQUIRE_SIGNED_EVENTS=1. Every admission decision is stored as an attestation; an id sent before is a duplicate. Each request is sampled for the empire SLO.',
      method: 'POST',
      path: EMPIRE_INGEST_PATH,
      auth: 'session-or-bearer',
      scope: 'write:events',
      tag: 'empire',
      kind: 'write',
      errors: [413],
      body: EmpireIngestBody,
      response: {
        schemaId: 'svc-empire-ingest.v1',
        fields: {
          accepted: Type.Integer({ description: 'Events stored by this request.' }),
          duplicates: Type.Integer({ description: 'Events whose id was stored before (or earlier in this request).' }),
          rejected: Type.Integer({ description: 'Events refused; nothing of them is stored but their attestation.' }),
          results: Type.Array(
            Type.Object({
              id: Type.String(),
              eventId: Nullable(Type.String({ format: 'uuid' })),
              compatMode: Type.Boolean(),
              rejectionReason: Nullable(StringEnum(['unsigned', 'bad-signature', 'key-retired-before-event'] as const)),
            }),
          ),
        },
      },
      example: {
        schema: 'svc-empire-ingest.v1',
        generatedAt,
        accepted: 1,
        duplicates: 0,
        rejected: 1,
        results: [
          { id: 'evt-000123', eventId: '7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0e', compatMode: false, rejectionReason: null },
          { id: 'evt-000124', eventId: null, compatMode: false, rejectionReason: 'bad-signature' },
        ],
      },
      onResponse: async (request: FastifyRequest, reply: FastifyReply) => {
        const done = answered.get(request);
        const toolset = (request.body as { toolset?: unknown } | undefined)?.toolset;
        ingest.recordSample({
          toolset: typeof toolset === 'string' ? toolset.slice(0, 128) : null,
          receivedAt: done?.receivedAt ?? clock.now(),
          outcome: sampleOutcome(reply.statusCode, done?.result, request.errorReason),
          latencyMs: reply.elapsedTime,
          eventCount: done?.result.accepted ?? 0,
        });
      },
      handler: async ({ body, request }) => {
        const receivedAt = clock.now();
        const result = await ingest.ingest(body);
        answered.set(request, { result, receivedAt });
        return result;
      },
    }),
  ];
}
