import { Type } from '@sinclair/typebox';
import { FederatedOverviewFields, OverviewRowSchema, PerRegion } from '../../empire/index.ts';
import { defineEndpoint, type Endpoint, IsoDate, V1 } from '../../../platform/http/registry.ts';
import { FEDERATION_TAG, generatedAt, OVERVIEW_UI_PATH } from '../schemas.ts';
import type { FederatedOverviewService } from './service.ts';

/** The federated overview (spec B group 2; docs/federation/README.md, "Federated overview"). */

export function federatedOverviewEndpoints(overview: FederatedOverviewService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'empireFederatedOverview',
      title: 'Overview of every toolset in every region',
      description:
        'Every active region\'s overview, asked through the bridge (this deployment in-process), merged by toolset: `events24h` and `events7d` summed, the sparklines summed hour by hour, `lastEventAt` the latest, `perRegion` each region\'s events of the last 24 hours. ' +
        'Regions that could not be asked are listed in `failedRegions` with a fixed reason, never thrown. A token bound to toolsets sees its own toolsets only (peers answer every toolset over the bridge; the merged answer is narrowed here). ' +
        'The same answer is `GET {v1}/empire/overview?federated=1` (there under `svc-empire-overview.v1`); the OpenAPI document lists this operation at its own path and, through `x-same-answer-as`, under `{v1}/empire/overview`.',
      method: 'GET',
      path: `${V1}/empire/overview/federated`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: FEDERATION_TAG,
      kind: 'read',
      uiPath: OVERVIEW_UI_PATH,
      sameAnswerAs: { method: 'GET', path: `${V1}/empire/overview`, query: { federated: '1' } },
      response: {
        schemaId: 'svc-empire-federated-overview.v1',
        fields: {
          windowEndIso: { ...IsoDate, description: 'This deployment\'s window end (exclusive): the end of the current hour.' },
          participatingRegions: FederatedOverviewFields.participatingRegions,
          failedRegions: FederatedOverviewFields.failedRegions,
          toolsets: Type.Array(Type.Composite([OverviewRowSchema, Type.Object({ perRegion: PerRegion })])),
        },
      },
      example: {
        schema: 'svc-empire-federated-overview.v1',
        generatedAt,
        windowEndIso: '2026-11-24T09:00:00.000Z',
        participatingRegions: ['eu-west', 'us-east'],
        failedRegions: [{ region: 'ap-south', reason: 'timeout' }],
        toolsets: [
          {
            toolset: 'crawler-lab',
            blurb: '1,804 events in the last 24 hours across 2 regions (12,620 events in 7 days); latest event 2026-11-24T08:59:12.000Z.',
            events24h: 1804,
            events7d: 12620,
            lastEventAt: '2026-11-24T08:59:12.000Z',
            sparkline24h: [72, 76, 70, 75, 73, 78, 82, 91, 87, 75, 70, 66, 69, 73, 75, 78, 79, 72, 70, 67, 75, 76, 73, 52],
            perRegion: { 'eu-west': 1204, 'us-east': 600 },
          },
        ],
      },
      handler: async ({ principal }) => overview.federated(principal),
    }),
  ];
}
