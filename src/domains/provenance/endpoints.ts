import { Type } from '@sinclair/typebox';
import { checkedByEndpoint } from '../../platform/http/openapi.ts';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, PageLimitParam, type Principal, StringEnum, TimeCursorParam, V1 } from '../../platform/http/registry.ts';
import { TOOLSET_PATTERN } from '../../platform/toolset-name.ts';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, type ProvenanceService } from './service.ts';

/** Provenance (spec B group 5): signing keys of the toolsets and the ingest's attestation rows. */

const generatedAt = '2026-11-24T08:00:00.000Z';
const TAG = 'provenance';

const Key = Type.Object({
  id: Type.String({ format: 'uuid' }),
  toolset: Type.String(),
  publicKeyB64: Type.String({ description: 'Standard base64 of the raw 32-byte Ed25519 public key.' }),
  status: StringEnum(['active', 'retired'] as const),
  ownerUserId: Nullable(Type.String()),
  createdAt: IsoDate,
  retiredAt: Nullable(IsoDate),
});
const exampleKey = {
  id: '0f3c2b1a-4d5e-4f60-8a7b-9c0d1e2f3a4b',
  toolset: 'crawler-lab',
  publicKeyB64: 'GAmhDLzpO0ATMKVn8jvMdGjWFWbOnrGtz1x/hLmbvQM=',
  status: 'active',
  ownerUserId: 'b6a0c1d2-3e4f-4a5b-8c6d-7e8f9a0b1c2d',
  createdAt: generatedAt,
  retiredAt: null,
};

const KeyOutcomeFields = {
  ok: Type.Boolean({ description: 'false: the request was refused (HTTP 400) and `reason`, `human` say why.' }),
  key: Type.Optional(Key),
  reason: Type.Optional(Type.String({ description: 'When ok is false: invalid-toolset, invalid-public-key-encoding, invalid-public-key-length, invalid-public-key, key-already-registered, invalid-key-id.' })),
  human: Type.Optional(Type.String()),
};

const Attestation = Type.Object({
  id: Type.String({ format: 'uuid' }),
  toolset: Type.String(),
  source: Type.String({ description: '`empire-ingest` for decisions of the empire ingest.' }),
  sourceId: Type.String({ description: 'The event\'s id as its toolset sent it.' }),
  kind: Type.String({ description: 'The event\'s eventType.' }),
  eventHash: Type.String({ description: 'SHA-256 hex of the event\'s RFC 8785 canonical bytes.' }),
  signatureB64: Nullable(Type.String()),
  toolsetKeyId: Nullable(Type.String({ format: 'uuid' })),
  attestedAt: Nullable(IsoDate),
  acceptedAt: IsoDate,
  compatMode: Type.Boolean(),
  rejectionReason: Nullable(StringEnum(['unsigned', 'bad-signature', 'key-retired-before-event'] as const)),
});

const PolicyFields = {
  toolset: Type.String(),
  requireSigned: Type.Boolean({ description: 'Effective now: true refuses the toolset\'s unsigned events (rejectionReason unsigned) instead of admitting them in compatibility mode.' }),
  source: StringEnum(['toolset', 'global'] as const, {
    description: '`global` when OBSERVATORY_REQUIRE_SIGNED_EVENTS=1 (which no toolset can relax) or the toolset has no policy of its own; `toolset` when its own policy decides.',
  }),
  toolsetRequireSigned: Nullable(Type.Boolean({ description: 'The toolset\'s own setting; null when it has none.' })),
  updatedAt: Nullable(IsoDate),
  updatedBy: Nullable(Type.String({ description: 'The operator who last changed the toolset\'s own setting.' })),
  activeKeys: Type.Integer({ minimum: 0, description: 'The toolset\'s provenance keys that are not retired.' }),
};
const examplePolicy = {
  schema: 'svc-provenance-toolset-policy.v1',
  generatedAt,
  toolset: 'crawler-lab',
  requireSigned: true,
  source: 'toolset',
  toolsetRequireSigned: true,
  updatedAt: generatedAt,
  updatedBy: 'alice',
  activeKeys: 1,
};
const ToolsetParams = Type.Object(
  { toolset: Type.String({ pattern: TOOLSET_PATTERN, description: '3 to 128 characters: a letter, then letters, digits or -.', examples: ['crawler-lab'] }) },
  { examples: [{ toolset: 'crawler-lab' }] },
);
const Limit = PageLimitParam(LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX);
const BooleanText = StringEnum(['true', 'false'] as const);

const who = (principal: Principal | null) => principal as Principal;

export function provenanceEndpoints(provenance: ProvenanceService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'listProvenanceKeys',
      title: 'List provenance signing keys',
      description: 'Signing keys of every toolset, newest first, with filters and a cursor. A token bound to toolsets lists only theirs (a `toolset` filter outside them is 403).',
      method: 'GET',
      path: `${V1}/provenance/keys`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/provenance',
      query: Type.Object({
        toolset: Type.Optional(Type.String({ maxLength: 128 })),
        status: Type.Optional(StringEnum(['active', 'retired'] as const)),
        cursor: TimeCursorParam,
        limit: Limit,
      }, { examples: [{ toolset: 'crawler-lab', status: 'active', cursor: '2026-11-24T12:00:00.000Z', limit: 50 }] }),
      response: { schemaId: 'svc-provenance-keys.v1', fields: { keys: Type.Array(Key), nextCursor: Nullable(Type.String()) } },
      example: { schema: 'svc-provenance-keys.v1', generatedAt, keys: [exampleKey], nextCursor: null },
      handler: async ({ query, principal }) => provenance.listKeys(query, principal),
    }),
    defineEndpoint({
      id: 'registerProvenanceKey',
      title: 'Register a provenance signing key',
      description:
        'Registers an Ed25519 public key for a toolset. Several active keys may coexist during a rotation; the newest active key wins. A toolset or key that breaks the rules answers 400 with ok false, reason and human. Audited as provenance.register.',
      method: 'POST',
      path: `${V1}/provenance/keys`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: '/provenance',
      refusedStatus: 400,
      body: Type.Object({
        // Checked by the endpoint, so a missing one is refused with ok false (spec C, Errors item 3); the documents say required.
        toolset: checkedByEndpoint(Type.Optional(Type.String({ description: `3 to 128 characters: a letter, then letters, digits or - (${TOOLSET_PATTERN}).` }))),
        publicKeyB64: checkedByEndpoint(Type.Optional(Type.String({ description: 'Canonical RFC 4648 base64 of a raw 32-byte Ed25519 public key.' }))),
      }, { examples: [{ toolset: 'crawler-lab', publicKeyB64: 'nLZ8FxXAeHwT1lK15f7V18QT+zly6kVUjzZj5hsxue0=' }] }),
      response: { schemaId: 'svc-provenance-key.v1', fields: KeyOutcomeFields },
      example: { schema: 'svc-provenance-key.v1', generatedAt, ok: true, key: exampleKey },
      handler: async ({ body, principal, requestId }) => provenance.register({ principal: who(principal), requestId }, body),
    }),
    defineEndpoint({
      id: 'retireProvenanceKey',
      title: 'Retire a provenance signing key',
      description:
        'Retires a key: events signed by it stay valid up to and including retiredAt, later ones are rejected with key-retired-before-event. Retiring a retired key answers it unchanged. 404 for an unknown key. Audited as provenance.retire.',
      method: 'POST',
      path: `${V1}/provenance/keys/{id}/retire`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: '/provenance',
      refusedStatus: 400,
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { examples: [{ id: '6f7a8b9c-0d1e-4f2a-8b3c-4d5e6f7a8b9c' }] }),
      body: Type.Object({}, { examples: [{}] }),
      response: { schemaId: 'svc-provenance-key.v1', fields: KeyOutcomeFields },
      example: { schema: 'svc-provenance-key.v1', generatedAt, ok: true, key: { ...exampleKey, status: 'retired', retiredAt: generatedAt } },
      handler: async ({ params, principal, requestId }) => provenance.retire({ principal: who(principal), requestId }, params.id),
    }),
    defineEndpoint({
      id: 'getToolsetSigningPolicy',
      title: 'Read a toolset\'s signing policy',
      description:
        'Whether the empire ingest refuses the toolset\'s unsigned events now (requireSigned, effective), and whether that comes from its own policy or the global OBSERVATORY_REQUIRE_SIGNED_EVENTS, with its active key count. A toolset nobody has set answers the global setting. A token bound to other toolsets is refused (403).',
      method: 'GET',
      path: `${V1}/provenance/toolsets/{toolset}/policy`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/provenance',
      params: ToolsetParams,
      response: { schemaId: 'svc-provenance-toolset-policy.v1', fields: PolicyFields },
      example: examplePolicy,
      handler: async ({ params, principal }) => provenance.readPolicy(params.toolset, principal),
    }),
    defineEndpoint({
      id: 'setToolsetSigningPolicy',
      title: 'Make a toolset signed-only, or not',
      description:
        'requireSigned true refuses the toolset\'s unsigned events with rejectionReason unsigned (while other toolsets may stay in compatibility mode); false returns it to the global setting\'s compatibility mode. Takes effect at once on this instance and within a second on the others. Setting the value it has changes nothing; a change is audited as provenance.policy with before and after. Answers the policy as GET does.',
      method: 'POST',
      path: `${V1}/provenance/toolsets/{toolset}/policy`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: '/provenance',
      params: ToolsetParams,
      body: Type.Object(
        { requireSigned: Type.Boolean({ description: 'true: refuse the toolset\'s unsigned events; false: admit them in compatibility mode unless OBSERVATORY_REQUIRE_SIGNED_EVENTS=1.' }) },
        { additionalProperties: false, examples: [{ requireSigned: true }] },
      ),
      response: { schemaId: 'svc-provenance-toolset-policy.v1', fields: PolicyFields },
      example: examplePolicy,
      handler: async ({ params, body, principal, requestId }) => provenance.setPolicy({ principal: who(principal), requestId }, params.toolset, body.requireSigned),
    }),
    defineEndpoint({
      id: 'listProvenanceAttestations',
      title: 'List attestations',
      description:
        'Every admission decision of the empire ingest, newest first by acceptedAt: admitted with a verified signature, admitted in compatibility mode, or rejected with its reason. A token bound to toolsets lists only theirs (a `toolset` filter outside them is 403).',
      method: 'GET',
      path: `${V1}/provenance/attestations`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/provenance',
      query: Type.Object({
        toolset: Type.Optional(Type.String({ maxLength: 128 })),
        source: Type.Optional(Type.String({ maxLength: 64 })),
        compatMode: Type.Optional(BooleanText),
        rejected: Type.Optional(BooleanText),
        cursor: TimeCursorParam,
        limit: Limit,
      }, { examples: [{ toolset: 'crawler-lab', source: 'empire-ingest', compatMode: 'true', rejected: 'false', cursor: '2026-11-24T12:00:00.000Z', limit: 50 }] }),
      response: { schemaId: 'svc-provenance-attestations.v1', fields: { attestations: Type.Array(Attestation), nextCursor: Nullable(Type.String()) } },
      example: {
        schema: 'svc-provenance-attestations.v1',
        generatedAt,
        attestations: [
          {
            id: '5d6e7f80-9a1b-4c2d-8e3f-4a5b6c7d8e9f',
            toolset: 'crawler-lab',
            source: 'empire-ingest',
            sourceId: 'evt-000123',
            kind: 'crawl.completed',
            eventHash: 'a3f1c9e27b4d5a6c8e0f1b2d3c4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60',
            signatureB64: 'q1bJ2y3vYbqk3yX1Zt5r9mHjvC3Qe5cKJ0Gm3zqv1E8tQn0O8H4k4y0b2cVv2cXK5y3d9fG1hJ2kL3mN4oP5qA==',
            toolsetKeyId: exampleKey.id,
            attestedAt: generatedAt,
            acceptedAt: generatedAt,
            compatMode: false,
            rejectionReason: null,
          },
        ],
        nextCursor: null,
      },
      handler: async ({ query, principal }) => provenance.listAttestations(query, principal),
    }),
  ];
}
