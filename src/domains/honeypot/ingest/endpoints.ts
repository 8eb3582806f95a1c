import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, V1 } from '../../../platform/http/registry.ts';
import type { TenantService } from '../tenants/service.ts';
import { IngestBody, type IngestService } from './service.ts';
import { signatureHeader } from './signature.ts';

const generatedAt = '2026-11-23T08:00:00.000Z';
const INGEST_PATH = '/api/observatory/honeypot/ingest';

const IngestedEventSchema = Type.Object({
  id: Nullable(Type.String({ description: 'The sender\'s id, or the `sig-…` id derived from the signed request when it gave none.' })),
  eventId: Type.String({ format: 'uuid' }),
  uaClass: Type.String(),
  fingerprintId: Type.String(),
  tarpit: Type.Object({ active: Type.Boolean(), delayMs: Type.Integer() }),
});

/** Per-request bookkeeping for the ingest sample written after the response. */
const ingestOutcome = new WeakMap<FastifyRequest, { eventCount: number; receivedAt: Date }>();

export function ingestEndpoints(deps: { tenants: Pick<TenantService, 'requireBySlug'>; ingest: IngestService; clock: Clock }): Endpoint[] {
  const { tenants, ingest, clock } = deps;
  return [
    defineEndpoint({
      id: 'ingestHoneypotEvents',
      title: 'Ingest honeypot events',
      description:
        'Honeypot sites send 1 to 500 events per request (1 MiB at most), signed with the tenant secret: headers `X-Observatory-Tenant: <slug>` and `X-Observatory-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, t within 300 s. A 200 means the events are committed. Events with an `id` already stored for the tenant count as duplicates; an event without `id` gets one derived from the signed request (`sig-…`, reported in `events[].id`), so a replayed request stores nothing again. When a fingerprint is tarpitted, the router should delay its own response by `delayMs`.',
      method: 'POST',
      path: INGEST_PATH,
      auth: 'tenant-signature',
      scope: null,
      tag: 'ingest',
      kind: 'write',
      errors: [413],
      // Shares the ingest work slots (OBSERVATORY_INGEST_CONCURRENCY) with the other ingest.
      concurrency: 'ingest',
      body: {
        ...IngestBody,
        examples: [
          {
            events: [
              {
                id: 'edge-eu-000001',
                method: 'GET',
                path: '/honeypot/topics/dns-over-https',
                query: 'ref=sitemap',
                ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)',
                ip: '52.230.152.7',
                ja4: 't13d1516h2_8daaf6152771_02713d6af862',
                asn: 8075,
                country: 'US',
                referer: null,
                headers: { accept: 'text/html', 'accept-language': 'en' },
              },
            ],
          },
        ],
      },
      response: {
        schemaId: 'svc-observatory-ingest.v1',
        fields: { accepted: Type.Integer(), duplicates: Type.Integer(), events: Type.Array(IngestedEventSchema) },
      },
      example: {
        schema: 'svc-observatory-ingest.v1',
        generatedAt,
        accepted: 1,
        duplicates: 0,
        events: [
          {
            id: 'edge-7f3a-000123',
            eventId: '6e5d4c3b-2a19-4807-b6a5-948372615048',
            uaClass: 'LIAR',
            fingerprintId: '9f86d081884c7d65',
            tarpit: { active: true, delayMs: 8000 },
          },
        ],
      },
      verifyCaller: async (request) => {
        const slug = request.headers['x-observatory-tenant'];
        // The tenant whose signature verified and the request's replay key reach the handler as `verified`.
        return ingest.verify(
          typeof slug === 'string' ? slug : undefined,
          typeof request.headers['x-observatory-signature'] === 'string' ? request.headers['x-observatory-signature'] : undefined,
          request.rawBody ?? '',
        );
      },
      onResponse: async (request: FastifyRequest, reply: FastifyReply) => {
        // A flood refused by the failure limit is sampled once per address and window (server.ts).
        if (request.floodRefused) return;
        const slug = request.headers['x-observatory-tenant'];
        const outcome = ingestOutcome.get(request);
        ingest.recordSample({
          tenantSlug: typeof slug === 'string' ? slug.slice(0, 64) : null,
          receivedAt: outcome?.receivedAt ?? clock.now(),
          outcome: reply.statusCode === 200 ? 'ok' : (request.errorReason ?? `http-${reply.statusCode}`),
          latencyMs: reply.elapsedTime,
          eventCount: outcome?.eventCount ?? 0,
        });
      },
      handler: async ({ body, request, verified: { tenant, replayKey } }) => {
        const receivedAt = clock.now();
        const result = await ingest.ingest(tenant, body, { replayKey });
        ingestOutcome.set(request, { eventCount: result.accepted, receivedAt });
        return result;
      },
    }),
    defineEndpoint({
      id: 'sendTestEvent',
      title: 'Send a synthetic test event',
      description:
        'Builds one synthetic event, signs it with the tenant\'s current secret and pushes it through the same ingest path (signature check, classification, enrichment, storage, sampling). It then shows in recent events.',
      method: 'POST',
      path: `${V1}/honeypot/test-event`,
      auth: 'session-or-bearer',
      scope: 'write:test-event',
      tag: 'ingest',
      kind: 'write',
      uiPath: '/honeypot/ops',
      body: Type.Object({
        tenant: Type.String({ pattern: '^[a-z0-9-]{1,64}$' }),
        path: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, default: '/honeypot/topics/observatory-test-event' })),
        ua: Type.Optional(Type.String({ maxLength: 2048 })),
        ip: Type.Optional(Type.String({ minLength: 2, maxLength: 64 })),
      }, { examples: [{ tenant: 'edge-eu', path: '/honeypot/topics/observatory-test-event', ua: 'Mozilla/5.0 (compatible; ObservatoryTest/1.0)', ip: '203.0.113.9' }] }),
      response: {
        schemaId: 'svc-observatory-test-event.v1',
        fields: {
          ok: Type.Boolean(),
          tenant: Type.String(),
          eventId: Type.String({ format: 'uuid' }),
          path: Type.String(),
          uaClass: Type.String(),
          acceptedAt: IsoDate,
        },
      },
      example: {
        schema: 'svc-observatory-test-event.v1',
        generatedAt,
        ok: true,
        tenant: 'docs-mirror',
        eventId: '0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6',
        path: '/honeypot/topics/observatory-test-event',
        uaClass: 'UNKNOWN_BOT',
        acceptedAt: generatedAt,
      },
      handler: async ({ body }) => {
        const tenant = await tenants.requireBySlug(body.tenant);
        const path = body.path ?? '/honeypot/topics/observatory-test-event';
        const event = {
          id: `observatory-test-${randomUUID()}`,
          path,
          ua: body.ua ?? 'Mozilla/5.0 (compatible; ObservatoryTestEvent/1.0; +https://observatory.invalid/test-event)',
          // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never a real client.
          ip: body.ip ?? '192.0.2.10',
          method: 'GET',
        };
        const rawBody = JSON.stringify({ events: [event] });
        const started = performance.now();
        const acceptedAt = clock.now();
        const t = Math.floor(acceptedAt.getTime() / 1000);
        let outcome = 'ok';
        try {
          // The event carries a fresh random id, so every call stores a new event even within
          // one second (its replay key would repeat only if the body did).
          const verified = await ingest.verify(tenant.slug, signatureHeader(tenant.signingSecret, t, rawBody), rawBody);
          const result = await ingest.ingest(verified.tenant, ingest.parseBody(rawBody), { replayKey: verified.replayKey });
          const [stored] = result.events;
          return { ok: true, tenant: tenant.slug, eventId: stored!.eventId, path, uaClass: stored!.uaClass, acceptedAt: acceptedAt.toISOString() };
        } catch (error) {
          outcome = (error as { reason?: string }).reason ?? 'internal';
          throw error;
        } finally {
          ingest.recordSample({ tenantSlug: tenant.slug, receivedAt: acceptedAt, outcome, latencyMs: performance.now() - started, eventCount: outcome === 'ok' ? 1 : 0 });
        }
      },
    }),
  ];
}
