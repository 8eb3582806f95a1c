import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import { defineEndpoint, type Endpoint, Nullable, StringEnum } from '../../../platform/http/registry.ts';
import { EmpireIngestBody, type EmpireIngest, type EmpireIngestOutcome } from './service.ts';

const generatedAt = '2026-11-24T08:00:00.000Z';
export const EMPIRE_INGEST_PATH = '/api/observatory/empire/ingest';

/** What the ingest sample of a request needs once the answer is out. */
const answered = new WeakMap<FastifyRequest, { outcome: EmpireIngestOutcome; receivedAt: Date }>();

/**
 * The outcome an empire ingest request is sampled with for the SLO (docs/empire/README.md, "SLO
 * samples"). An unsigned event admitted although its toolset has an active key outranks refused
 * events: a sender could otherwise hide a downgrade behind one badly signed event per batch.
 */
export function sampleOutcome(status: number, outcome: EmpireIngestOutcome | undefined, errorReason: string | undefined): string {
  if (status !== 200) return errorReason ?? `http-${status}`;
  if (outcome && outcome.compatWithKeys > 0) return 'compat-unsigned-with-keys';
  return outcome && outcome.result.rejected > 0 ? 'rejected-events' : 'ok';
}

/**
 * The toolset a request's sample belongs to: the one its body names, unless the caller was refused
 * it (403): a token bound to other toolsets must not be able to spoil that toolset's SLO.
 */
function sampledToolset(request: FastifyRequest): string | null {
  const toolset = (request.body as { toolset?: unknown } | undefined)?.toolset;
  if (typeof toolset !== 'string' || request.errorReason === 'forbidden') return null;
  return toolset.slice(0, 128);
}

export function empireIngestEndpoints(deps: { ingest: EmpireIngest; clock: Clock }): Endpoint[] {
  const { ingest, clock } = deps;
  return [
    defineEndpoint({
      id: 'empireIngest',
      title: 'Ingest toolset events',
      description:
        'A toolset sends up to 500 events (spec D4). Each signed event is verified with Ed25519 against the toolset\'s provenance keys over its RFC 8785 canonical bytes; unsigned events are admitted in compatibility mode unless OBSERVATORY_REQUIRE_SIGNED_EVENTS=1 or the toolset\'s own policy makes it signed-only. Every admission decision is stored as an attestation; an id sent before is a duplicate. A token bound to toolsets writes only for those (403 otherwise). An event whose payload is deeper than 32 levels or over 64 KiB canonical, holds a non-finite number or a lone surrogate, or whose ts is over 30 days old or 5 minutes ahead refuses the whole request (400 invalid-body naming the field). Each request is sampled for the empire SLO.',
      method: 'POST',
      path: EMPIRE_INGEST_PATH,
      auth: 'session-or-bearer',
      scope: 'write:events',
      tag: 'empire',
      kind: 'write',
      errors: [413],
      // Shares the ingest work slots (OBSERVATORY_INGEST_CONCURRENCY) with the other ingest.
      concurrency: 'ingest',
      body: {
        ...EmpireIngestBody,
        examples: [
          {
            toolset: 'crawler-lab',
            events: [
              { id: 'crawl-000001', eventType: 'crawl.started', tenant: 'acme', payload: { url: 'https://example.com/', depth: 2 } },
              { id: 'crawl-000002', eventType: 'crawl.finished', tenant: 'acme', causedBy: 'crawl-000001', payload: { pages: 14 } },
            ],
          },
        ],
      },
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
        // A flood refused by the failure limit is sampled once per address and window (server.ts).
        if (request.floodRefused) return;
        const done = answered.get(request);
        ingest.recordSample({
          toolset: sampledToolset(request),
          receivedAt: done?.receivedAt ?? clock.now(),
          outcome: sampleOutcome(reply.statusCode, done?.outcome, request.errorReason),
          latencyMs: reply.elapsedTime,
          eventCount: done?.outcome.result.accepted ?? 0,
        });
      },
      handler: async ({ body, principal, request }) => {
        const receivedAt = clock.now();
        const outcome = await ingest.ingest(body, principal);
        answered.set(request, { outcome, receivedAt });
        return outcome.result;
      },
    }),
  ];
}
