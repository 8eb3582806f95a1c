import { Type } from '@sinclair/typebox';
import { forbidden } from '../../../platform/errors.ts';
import { defineEndpoint, type Endpoint, Nullable, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { SLO_BADGE_THRESHOLDS } from '../../empire/index.ts';
import { REGION_STATUSES } from '../regions/service.ts';
import { FailedRegionSchema, FEDERATION_TAG, generatedAt, REGIONS_UI_PATH } from '../schemas.ts';
import { LAG_YELLOW_TIER_FACTOR } from './rules.ts';
import type { RegionSloService } from './service.ts';

/** The region SLO (spec B group 3; docs/federation/README.md, "Region SLO"). */

const Row = Type.Object({
  regionKey: Type.String(),
  displayName: Type.String(),
  isPrimary: Type.Boolean(),
  status: StringEnum(REGION_STATUSES),
  p95LatencyMs: Nullable(Type.Number({ description: 'p95 latency of every toolset\'s ingest requests of the last 24 hours, pooled.' })),
  okRatePct: Nullable(Type.Number({ description: 'Share of those requests that were `ok`, in percent (two decimals).' })),
  ingestSamples24h: Type.Integer({ minimum: 0, description: 'How many requests those figures are taken over.' }),
  graphLagSec: Nullable(Type.Number({ description: 'The graph\'s worst lag over its node kinds; null before the first materialisation.' })),
  replayParity: StringEnum(['drifted', 'matched', 'unknown'] as const, { description: 'The region\'s migration digest against this deployment\'s; `unknown` in a `local=1` answer.' }),
  migrationDigest: Type.String(),
  worstLagSec: Nullable(Type.Number({ description: 'The worst of the graph lag and the honeypot dashboard and analytics rollup lags; null when none is known.' })),
  latencyTierSec: Type.Integer({ minimum: 1 }),
  badge: StringEnum(['green', 'yellow', 'red', 'unknown'] as const),
});

export function regionSloEndpoints(slo: RegionSloService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'getRegionSlo',
      title: 'Region SLO',
      description:
        'One row per active region (this deployment first, then the peers that answered, by key), each region measured by itself and asked through the bridge; with `local=1`, this deployment\'s row alone. ' +
        `Badge: the worst of the lag badge (\`worstLagSec\` within the region's \`latencyTierSec\` green, within ${LAG_YELLOW_TIER_FACTOR}× yellow, beyond red) and the ingest badge (the empire ingest SLO thresholds over every toolset pooled: ` +
        `at least ${SLO_BADGE_THRESHOLDS.minSamples} requests, green at ${SLO_BADGE_THRESHOLDS.green.okRatePct}% ok and p95 ≤ ${SLO_BADGE_THRESHOLDS.green.p95Ms} ms, yellow at ${SLO_BADGE_THRESHOLDS.yellow.okRatePct}% and ${SLO_BADGE_THRESHOLDS.yellow.p95Ms} ms), at least yellow while \`replayParity\` is \`drifted\`; \`unknown\` when nothing is known. ` +
        'A peer calls this read with the bridge token, with `local=1` only: a bridge call without it is refused (403), so regions never fan out on each other\'s behalf.',
      method: 'GET',
      path: `${V1}/empire/region-slo`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: FEDERATION_TAG,
      kind: 'read',
      uiPath: REGIONS_UI_PATH,
      bridge: true,
      spansEveryToolset: 'the region SLO (every toolset\'s ingest, the whole graph)',
      query: Type.Object(
        { local: Type.Optional(StringEnum(['0', '1'] as const, { description: '`1`: this deployment\'s row only; otherwise every active region is asked.' })) },
        { examples: [{ local: '0' }] },
      ),
      response: { schemaId: 'svc-empire-region-slo.v1', fields: { rows: Type.Array(Row), failed: Type.Array(FailedRegionSchema) } },
      example: {
        schema: 'svc-empire-region-slo.v1',
        generatedAt,
        rows: [
          {
            regionKey: 'eu-west',
            displayName: 'EU West',
            isPrimary: true,
            status: 'active',
            p95LatencyMs: 18.4,
            okRatePct: 99.86,
            ingestSamples24h: 1440,
            graphLagSec: 75,
            replayParity: 'matched',
            migrationDigest: '5d41402abc4b2a76b9719d911017c592ae1b6f1c9e3a8f0d2c4b6a8e0f1d3c5b',
            worstLagSec: 75,
            latencyTierSec: 300,
            badge: 'green',
          },
        ],
        failed: [{ region: 'us-east', reason: 'unreachable' }],
      },
      handler: async ({ query, principal }) => {
        if (query.local === '1') return slo.localRows();
        if (principal?.via === 'bridge') {
          throw forbidden('A bridge call is answered from this deployment alone: ask with local=1; regions never fan out on each other\'s behalf.');
        }
        return slo.federatedRows();
      },
    }),
  ];
}
