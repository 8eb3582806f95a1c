import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, Nullable, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { TRUST_TAG } from '../drift/endpoints.ts';
import { DIMENSION_KEYS, SNAPSHOT_BADGES, SNAPSHOT_RULES } from './score.ts';
import type { TrustSnapshotService } from './service.ts';

/** GET {v1}/trust/snapshot (docs/trust/README.md, "Trust snapshot"). */

/** Completes "… spans every toolset" (docs/operations.md, "Toolset binding"). */
export const SNAPSHOT_SPANS = 'the trust snapshot, which is composed over the whole deployment,';

const Badge = StringEnum(SNAPSHOT_BADGES);
const w = SNAPSHOT_RULES.weights;

const Dimension = Type.Object({
  key: StringEnum(DIMENSION_KEYS),
  title: Type.String(),
  badge: Badge,
  summary: Type.String({ description: 'What the badge rests on, in sentences; for unknown, which input is missing.' }),
  drillIn: Type.String({ description: 'The console page to look at (of the worst input when the badge is not green).' }),
  apiDrillIn: Type.String({ description: 'The API path behind that page.' }),
});

const example = {
  schema: 'svc-trust-snapshot.v1',
  generatedAt: '2026-11-28T06:00:00.000Z',
  overallBadge: 'yellow',
  dimensions: [
    { key: 'audit', title: 'Audit trail', badge: 'green', summary: 'The audit chain was last verified 3 h ago. 42 operator actions recorded in the last 24 h; 17 chain facts written since the last verification.', drillIn: '/audit', apiDrillIn: `${V1}/audit/chain` },
    { key: 'drift', title: 'Drift', badge: 'green', summary: 'No drift event is open or acknowledged.', drillIn: '/trust/drift', apiDrillIn: `${V1}/trust/drift` },
    { key: 'freshness', title: 'Freshness', badge: 'green', summary: 'Graph lag 45 s. Analytics rollup lag 9 min. The newest verified backup restore is 5 h old.', drillIn: '/empire/graph', apiDrillIn: `${V1}/empire/graph/slo` },
    { key: 'incidents', title: 'Incidents', badge: 'yellow', summary: '1 empire incident open or acknowledged (0 critical, 1 major, 0 minor).', drillIn: '/empire/incidents', apiDrillIn: `${V1}/empire/incidents` },
    { key: 'integrity', title: 'Integrity', badge: 'green', summary: 'The audit chain was verified intact at 2026-11-28T03:00:00.000Z (1204 facts). The latest restore verification (observatory, snapshot 9d1c7a52-6e0b-4c3f-a8d2-3b4e5f6a7b8c) ended ok. 2 toolsets with signing keys refuse unsigned events. Migration digests match across 3 regions.', drillIn: '/audit', apiDrillIn: `${V1}/audit/chain` },
    { key: 'posture', title: 'Compliance posture', badge: 'green', summary: 'soc2: green, 10 passing, 0 failing as of 2026-11-28T05:11:00.000Z. iso27001: green, 10 passing, 0 failing as of 2026-11-28T05:11:00.000Z.', drillIn: '/compliance', apiDrillIn: `${V1}/compliance/posture` },
  ],
  numbers: {
    postureGreen: 20,
    postureFailing: 0,
    federationDigest: '5d41402abc4b2a76b9719d911017c592ae1e4b2d6c8f1a3e9b7c5d2f4a6e8b01',
    migrationParity: 'matched',
    graphLagSec: 45,
    openIncidents: 1,
    recentAudits24h: 42,
    driftEvents24h: 0,
  },
  score: {
    score: 93,
    badge: 'green',
    breakdown: [
      { dimension: 'integrity', weight: 30, badge: 'green', contribution: 30 },
      { dimension: 'posture', weight: 25, badge: 'green', contribution: 25 },
      { dimension: 'freshness', weight: 15, badge: 'green', contribution: 15 },
      { dimension: 'incidents', weight: 15, badge: 'yellow', contribution: 7.5 },
      { dimension: 'audit', weight: 10, badge: 'green', contribution: 10 },
      { dimension: 'drift', weight: 5, badge: 'green', contribution: 5 },
    ],
  },
};

export function trustSnapshotEndpoints(service: TrustSnapshotService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'getTrustSnapshot',
      title: 'Trust snapshot',
      description: `Six dimensions (integrity, posture, freshness, incidents, audit, drift), each green, yellow, red or unknown (an input this deployment lacks is unknown and says so), with a summary and where to look in the console and the API; the headline numbers; and a weighted score 0–100 (weights integrity ${w.integrity}, posture ${w.posture}, freshness ${w.freshness}, incidents ${w.incidents}, audit ${w.audit}, drift ${w.drift}; unknown dimensions left out and the rest renormalised). Every cut-off is in docs/trust/README.md. Writes nothing. A token bound to toolsets is refused (403): the snapshot spans every toolset.`,
      method: 'GET',
      path: `${V1}/trust/snapshot`,
      auth: 'session-or-bearer',
      spansEveryToolset: SNAPSHOT_SPANS,
      scope: 'read:empire',
      tag: TRUST_TAG,
      kind: 'read',
      uiPath: '/trust',
      response: {
        schemaId: 'svc-trust-snapshot.v1',
        fields: {
          overallBadge: StringEnum(SNAPSHOT_BADGES, {
            description: `red when any dimension is red; unknown when the known dimensions carry less than ${SNAPSHOT_RULES.minCoveragePct}% of the weight; yellow when any is yellow or unknown; green when all six are green.`,
          }),
          dimensions: Type.Array(Dimension),
          numbers: Type.Object({
            postureGreen: Type.Integer({ minimum: 0, description: 'Compliance controls passing, summed over the frameworks.' }),
            postureFailing: Type.Integer({ minimum: 0, description: 'Compliance controls failing, summed over the frameworks.' }),
            federationDigest: Nullable(Type.String({ description: 'The federation digest of the region fan-out; null when migrationParity is unknown.' })),
            migrationParity: StringEnum(['drifted', 'matched', 'unknown'] as const, { description: 'unknown when federation is not part of the deployment or the fan-out failed.' }),
            graphLagSec: Nullable(Type.Integer({ minimum: 0 })),
            openIncidents: Type.Integer({ minimum: 0, description: 'Empire incidents open or acknowledged.' }),
            recentAudits24h: Type.Integer({ minimum: 0, description: 'Operator audit rows of the last 24 hours.' }),
            driftEvents24h: Type.Integer({ minimum: 0, description: 'Drift events opened in the last 24 hours.' }),
          }),
          score: Type.Object({
            score: Type.Integer({ minimum: 0, maximum: 100 }),
            badge: StringEnum(SNAPSHOT_BADGES, {
              description: `green at ${SNAPSHOT_RULES.scoreBadge.green} or more, yellow at ${SNAPSHOT_RULES.scoreBadge.yellow} or more, red below; unknown when the known dimensions carry less than ${SNAPSHOT_RULES.minCoveragePct}% of the weight.`,
            }),
            breakdown: Type.Array(
              Type.Object({
                dimension: StringEnum(DIMENSION_KEYS),
                weight: Type.Integer({ minimum: 0, maximum: 100 }),
                badge: Badge,
                contribution: Type.Number({ minimum: 0, maximum: 100, description: 'weight × points (green 100, yellow 50, red 0) / the weight of the known dimensions, one decimal; 0 for unknown.' }),
              }),
            ),
          }),
        },
      },
      example,
      handler: async () => service.snapshot(),
    }),
  ];
}
