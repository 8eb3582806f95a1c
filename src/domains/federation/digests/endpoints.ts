import { Type } from '@sinclair/typebox';
import { badRequest } from '../../../platform/errors.ts';
import { defineEndpoint, EmptyBody, type Endpoint, IsoDate, Nullable, V1 } from '../../../platform/http/registry.ts';
import {
  DigestTupleSchema,
  exampleFederationDigest,
  exampleTuples,
  FailedRegionSchema,
  FEDERATION_TAG,
  generatedAt,
  MigrationParitySchema,
  REGIONS_UI_PATH,
} from '../schemas.ts';
import { MAX_REGIONS } from '../regions/service.ts';
import { NO_GRAPH_DIGEST } from './rules.ts';
import type { DigestService } from './service.ts';

/**
 * Digest tuples, the federation digest and federation replay (spec B group 3; docs/federation/README.md,
 * "Digests", "Replay"). They span every toolset: a token bound to toolsets is refused (403).
 */

const SPANS = 'the federation digest (migrations, the whole graph and every compliance control)';
const Hex64 = Type.String({ pattern: '^[0-9a-f]{64}$' });
const DriftDetailsSchema = Type.Array(Type.Object({ migrationDigest: Type.String(), regionKey: Type.String() }), {
  description: 'The regions whose migration digest differs from this deployment\'s, by key.',
});

export function digestEndpoints(digests: DigestService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'getRegionDigest',
      title: 'This region\'s digest tuple',
      description:
        'This deployment\'s digest tuple, computed now: `migrationDigest` (SHA-256 over the hashes of the applied migrations in drizzle.__drizzle_migrations, in the order applied, one per line), ' +
        `\`graphDigest\` (the stored digest of the latest completed graph materialisation; ${NO_GRAPH_DIGEST} before the first), ` +
        '`complianceDigest` (SHA-256 of the RFC 8785 canonical JSON of {framework: {controlId: outcome in force or null}} over every shipped control; times left out, so an unchanged posture gives an unchanged digest). ' +
        '`inputs` says what each was taken over. Peer deployments read it with the bridge token during a fan-out.',
      method: 'GET',
      path: `${V1}/empire/region-digest`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: FEDERATION_TAG,
      kind: 'read',
      uiPath: REGIONS_UI_PATH,
      bridge: true,
      spansEveryToolset: SPANS,
      response: {
        schemaId: 'svc-empire-region-digest-local.v1',
        fields: {
          region: Type.String(),
          tuple: DigestTupleSchema,
          inputs: Type.Object({
            migrationsApplied: Type.Integer({ minimum: 0 }),
            graphMaterialisationId: Nullable(Type.String({ format: 'uuid' })),
            graphMaterialisedAt: Nullable(IsoDate),
            complianceControls: Type.Integer({ minimum: 0, description: 'Controls of every shipped framework.' }),
            complianceEvaluated: Type.Integer({ minimum: 0, description: 'Of them, those with an outcome in force.' }),
          }),
        },
      },
      example: {
        schema: 'svc-empire-region-digest-local.v1',
        generatedAt,
        region: 'eu-west',
        tuple: exampleTuples[0],
        inputs: { migrationsApplied: 26, graphMaterialisationId: '4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f', graphMaterialisedAt: '2026-11-24T07:59:00.000Z', complianceControls: 24, complianceEvaluated: 24 },
      },
      handler: async () => digests.local(),
    }),
    defineEndpoint({
      id: 'runRegionDigest',
      title: 'Federation digest over every active region',
      description:
        'Asks every active region of the registry for its digest tuple through the bridge (in parallel, OBSERVATORY_FEDERATION_CONCURRENCY at a time, each within OBSERVATORY_FEDERATION_TIMEOUT_MS, never retried); this deployment answers in-process. ' +
        '`tuples` and `participating` are sorted by region key; `federationDigest` is SHA-256 of the canonical JSON of `tuples`. `migrationParity` is `matched` when every tuple carries this deployment\'s migration digest, else `drifted` with the others in `migrationDriftDetails`. ' +
        'A region that could not be asked or did not answer is listed in `failed` with a fixed reason, never thrown. Not open to the bridge token: a peer never fans out on another\'s behalf.',
      method: 'POST',
      path: `${V1}/empire/region-digest`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: FEDERATION_TAG,
      kind: 'read',
      uiPath: REGIONS_UI_PATH,
      spansEveryToolset: SPANS,
      body: EmptyBody,
      response: {
        schemaId: 'svc-empire-region-digest.v1',
        fields: {
          participating: Type.Array(Type.String()),
          failed: Type.Array(FailedRegionSchema),
          tuples: Type.Array(DigestTupleSchema),
          federationDigest: Hex64,
          migrationParity: MigrationParitySchema,
          migrationDriftDetails: DriftDetailsSchema,
        },
      },
      example: {
        schema: 'svc-empire-region-digest.v1',
        generatedAt,
        participating: ['eu-west', 'us-east'],
        failed: [{ region: 'ap-south', reason: 'timeout' }],
        tuples: exampleTuples,
        federationDigest: exampleFederationDigest,
        migrationParity: 'matched',
        migrationDriftDetails: [],
      },
      handler: async () => {
        const { own, ...answer } = await digests.fanOutDigest();
        void own;
        return answer;
      },
    }),
    defineEndpoint({
      id: 'runFederationReplay',
      title: 'Replay the federation digest against a pinned one',
      description:
        'Runs the region-digest fan-out now and compares its federation digest with `pinnedDigest` (`matches`). With `pinnedTuples` (the `tuples` of an earlier fan-out), `pinnedTuplesDigest` is their federation digest and `driftDetail` compares region by region over the pinned and live region keys (sorted): ' +
        'a region is `drifted` when it is on one side only or any member of its tuple differs. Without `pinnedTuples`, `driftDetail` is empty and `pinnedTuplesDigest` null. Failed regions are listed, never thrown.',
      method: 'POST',
      path: `${V1}/empire/federation-replay`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: FEDERATION_TAG,
      kind: 'read',
      uiPath: REGIONS_UI_PATH,
      spansEveryToolset: SPANS,
      body: Type.Object(
        {
          pinnedDigest: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'A federationDigest recorded earlier.' }),
          pinnedTuples: Type.Optional(Type.Array(DigestTupleSchema, { maxItems: MAX_REGIONS, description: 'The tuples of that fan-out; one per region key.' })),
        },
        { additionalProperties: false, examples: [{ pinnedDigest: exampleFederationDigest, pinnedTuples: exampleTuples }] },
      ),
      response: {
        schemaId: 'svc-empire-federation-replay.v1',
        fields: {
          pinnedDigest: Type.String(),
          liveDigest: Hex64,
          matches: Type.Boolean(),
          participating: Type.Array(Type.String()),
          failed: Type.Array(FailedRegionSchema),
          migrationParity: MigrationParitySchema,
          pinnedTuplesDigest: Nullable(Hex64),
          driftDetail: Type.Array(Type.Object({ regionKey: Type.String(), drifted: Type.Boolean(), live: Nullable(DigestTupleSchema), pinned: Nullable(DigestTupleSchema) })),
        },
      },
      example: {
        schema: 'svc-empire-federation-replay.v1',
        generatedAt,
        pinnedDigest: exampleFederationDigest,
        liveDigest: 'd7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592',
        matches: false,
        participating: ['eu-west', 'us-east'],
        failed: [],
        migrationParity: 'matched',
        pinnedTuplesDigest: exampleFederationDigest,
        driftDetail: [
          { regionKey: 'eu-west', drifted: false, live: exampleTuples[0], pinned: exampleTuples[0] },
          {
            regionKey: 'us-east',
            drifted: true,
            live: { ...exampleTuples[1]!, graphDigest: '3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d' },
            pinned: exampleTuples[1],
          },
        ],
      },
      handler: async ({ body }) => {
        const keys = (body.pinnedTuples ?? []).map((t) => t.regionKey);
        if (new Set(keys).size !== keys.length) throw badRequest('invalid-body', 'pinnedTuples may name each region key once.', { field: 'body.pinnedTuples' });
        return digests.replay(body);
      },
    }),
  ];
}
