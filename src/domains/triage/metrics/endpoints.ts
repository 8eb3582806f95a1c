import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { generatedAt, TAG, UI_METRICS } from '../schemas.ts';
import { type AgentService, BADGE_GREEN_FROM, METRICS_DAYS, MIN_DECISIONS, ROLLBACK_BELOW } from './service.ts';

/** Trust metrics of the agents (spec B `GET triage/metrics`; docs/triage/README.md, "Metrics and rollback"). */
export function metricsEndpoints(deps: { agents: AgentService }): Endpoint[] {
  const Pct = Nullable(Type.Number({ minimum: 0, maximum: 100 }));
  return [
    defineEndpoint({
      id: 'triageMetrics',
      title: 'Agent trust metrics',
      description:
        `Per agent and version, over the proposals of the last ${METRICS_DAYS} days: \`acceptedRate\` (accepted ÷ operator decisions, 0..1), \`precisionPct\` (accepted ÷ every proposal with an outcome, auto-rejected included), \`recallPct\` (incident classifier: the share of incidents opened that it proposed or opened; null for the other agents), \`meanTimeToDecisionSec\`, and \`badge\`: ` +
        `green from ${BADGE_GREEN_FROM} accepted, yellow from ${ROLLBACK_BELOW}, red below, unknown under ${MIN_DECISIONS} decisions. \`versions\` shows each agent's active and previous version and whether the watch rolled it back.`,
      method: 'GET',
      path: `${V1}/empire/triage/metrics`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_METRICS,
      response: {
        schemaId: 'svc-triage-metrics.v1',
        fields: {
          windowDays: Type.Integer(),
          agents: Type.Array(
            Type.Object({
              agent: Type.String(),
              agentVersion: Type.String(),
              active: Type.Boolean(),
              proposals: Type.Integer(),
              pending: Type.Integer(),
              accepted: Type.Integer(),
              rejected: Type.Integer(),
              autoRejected: Type.Integer(),
              acceptedRate: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
              precisionPct: Pct,
              recallPct: Pct,
              meanTimeToDecisionSec: Nullable(Type.Number({ minimum: 0 })),
              badge: StringEnum(['green', 'yellow', 'red', 'unknown'] as const),
              decided24h: Type.Integer(),
              acceptedRate24h: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
            }),
          ),
          versions: Type.Array(
            Type.Object({
              agent: Type.String(),
              activeVersion: Type.String(),
              previousVersion: Nullable(Type.String()),
              changedAt: IsoDate,
              changeReason: StringEnum(['deploy', 'rollback'] as const),
              rolledBackFrom: Nullable(Type.String()),
            }),
          ),
        },
      },
      example: {
        schema: 'svc-triage-metrics.v1',
        generatedAt,
        windowDays: 30,
        agents: [
          {
            agent: 'incident-classifier',
            agentVersion: 'incident-classifier@1.1.0',
            active: true,
            proposals: 40,
            pending: 4,
            accepted: 24,
            rejected: 8,
            autoRejected: 4,
            acceptedRate: 0.75,
            precisionPct: 66.67,
            recallPct: 80,
            meanTimeToDecisionSec: 1260.5,
            badge: 'green',
            decided24h: 6,
            acceptedRate24h: 0.8333,
          },
        ],
        versions: [{ agent: 'incident-classifier', activeVersion: 'incident-classifier@1.1.0', previousVersion: 'incident-classifier@1.0.0', changedAt: '2026-11-20T09:00:00.000Z', changeReason: 'deploy', rolledBackFrom: null }],
      },
      handler: async () => deps.agents.metrics(),
    }),
  ];
}
