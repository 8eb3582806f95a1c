import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { FEDERATION_TAG, generatedAt, REGIONS_UI_PATH } from '../schemas.ts';
import {
  DEFAULT_LATENCY_TIER_SEC,
  DISPLAY_NAME_MAX,
  HOST_MAX,
  LATENCY_TIER_MAX_SEC,
  MAX_REGIONS,
  REGION_KEY_PATTERN,
  REGION_STATUSES,
  type RegionService,
  type RegionView,
  SLUG_MAX,
  URL_MAX,
} from './service.ts';

/**
 * The regions registry (spec B group 3, D6; docs/federation/README.md, "Regions"). Regions belong to no
 * toolset: a token bound to toolsets is treated like any other (its scopes decide).
 */

const Region = Type.Object({
  key: Type.String({ description: 'The region key: a deployment\'s OBSERVATORY_REGION.' }),
  displayName: Type.String(),
  baseUrl: Type.String({ description: 'The deployment\'s origin; the bridge token goes there, at the federation bridge routes only.' }),
  hostProjectSlug: Nullable(Type.String()),
  databaseHost: Nullable(Type.String()),
  latencyTierSec: Type.Integer({ minimum: 1, description: 'The lag this region is held to (region SLO badge).' }),
  status: StringEnum(REGION_STATUSES, { description: '`active` regions are fanned out to; `standby` and `retired` are listed, never asked.' }),
  isPrimary: Type.Boolean({ description: 'At most one region is primary.' }),
  isCurrent: Type.Boolean({ description: 'This row is the deployment answering (OBSERVATORY_REGION).' }),
  updatedAt: Nullable({ ...IsoDate, description: 'Null for the built-in seed row.' }),
});

const exampleRows: RegionView[] = [
  {
    key: 'eu-west',
    displayName: 'EU West',
    baseUrl: 'https://eu.observatory.example.com/',
    hostProjectSlug: 'observatory-eu',
    databaseHost: 'db-eu.internal',
    latencyTierSec: 300,
    status: 'active',
    isPrimary: true,
    isCurrent: true,
    updatedAt: '2026-11-20T10:00:00.000Z',
  },
  {
    key: 'us-east',
    displayName: 'US East',
    baseUrl: 'https://us.observatory.example.com/',
    hostProjectSlug: 'observatory-us',
    databaseHost: 'db-us.internal',
    latencyTierSec: 600,
    status: 'active',
    isPrimary: false,
    isCurrent: false,
    updatedAt: '2026-11-20T10:05:00.000Z',
  },
];

export function regionEndpoints(regions: RegionService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'listEmpireRegions',
      title: 'Regions registry',
      description:
        'Every registered region, by key, with `currentRegion` (this deployment\'s OBSERVATORY_REGION). An empty registry answers the built-in seed (`seeded` true): this deployment alone, ' +
        `active and primary, at OBSERVATORY_PUBLIC_URL's origin, latency tier ${DEFAULT_LATENCY_TIER_SEC} s.`,
      method: 'GET',
      path: `${V1}/empire/regions`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: FEDERATION_TAG,
      kind: 'read',
      uiPath: REGIONS_UI_PATH,
      response: {
        schemaId: 'svc-empire-regions.v1',
        fields: {
          currentRegion: Type.String(),
          seeded: Type.Boolean({ description: 'True when the registry is empty and `rows` is the built-in seed.' }),
          rows: Type.Array(Region),
        },
      },
      example: { schema: 'svc-empire-regions.v1', generatedAt, currentRegion: 'eu-west', seeded: false, rows: exampleRows },
      handler: async () => regions.list(),
    }),
    defineEndpoint({
      id: 'upsertEmpireRegion',
      title: 'Register or update a region',
      description:
        'Upserts a region by `key`. `baseUrl` must be an origin (scheme, host, port; no path, query or fragment). For any region but this deployment\'s own it must also be an origin the bridge token may go to: ' +
        'its host in OBSERVATORY_BRIDGE_PEER_HOSTS, https unless OBSERVATORY_ALLOW_PRIVATE_OUTBOUND, an allowed port and a public address (400 `outbound-refused` otherwise). ' +
        `Fields left out keep their stored value (new rows: \`displayName\` the key, latency tier ${DEFAULT_LATENCY_TIER_SEC} s, \`active\`, not primary). \`isPrimary\` true moves the primary flag to this row (at most one primary). ` +
        `At most ${MAX_REGIONS} regions (409 \`limit-reached\` for a new key beyond). Audited as \`federation.region-upsert\`.`,
      method: 'POST',
      path: `${V1}/empire/regions`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: FEDERATION_TAG,
      kind: 'write',
      uiPath: REGIONS_UI_PATH,
      errors: [409],
      body: Type.Object(
        {
          key: Type.String({ pattern: REGION_KEY_PATTERN, description: '1 to 64 of a-z, 0-9 and -, starting with a letter or digit.' }),
          displayName: Type.Optional(Type.String({ minLength: 1, maxLength: DISPLAY_NAME_MAX })),
          baseUrl: Type.String({ minLength: 1, maxLength: URL_MAX }),
          hostProjectSlug: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: SLUG_MAX }))),
          databaseHost: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: HOST_MAX }))),
          latencyTierSec: Type.Optional(Type.Integer({ minimum: 1, maximum: LATENCY_TIER_MAX_SEC })),
          status: Type.Optional(StringEnum(REGION_STATUSES)),
          isPrimary: Type.Optional(Type.Boolean()),
        },
        {
          additionalProperties: false,
          // This deployment's own row (OBSERVATORY_REGION `local`, the default): it needs no peer host. A peer's row is the same call with its key and origin.
          examples: [{ key: 'local', displayName: 'Local', baseUrl: 'https://observatory.example.com', hostProjectSlug: 'observatory', databaseHost: 'db.internal', latencyTierSec: 300, status: 'active', isPrimary: true }],
        },
      ),
      response: { schemaId: 'svc-empire-region.v1', fields: { ok: Type.Literal(true), row: Region } },
      example: {
        schema: 'svc-empire-region.v1',
        generatedAt,
        ok: true,
        row: { ...exampleRows[0]!, key: 'local', displayName: 'Local', baseUrl: 'https://observatory.example.com/', hostProjectSlug: 'observatory', databaseHost: 'db.internal' },
      },
      handler: async ({ body, principal, requestId }) => ({ ok: true as const, row: await regions.upsert({ principal: principal!, requestId }, body) }),
    }),
  ];
}
