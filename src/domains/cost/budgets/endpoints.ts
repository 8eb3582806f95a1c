import { Type } from '@sinclair/typebox';
import { defineEndpoint, EmptyBody, type Endpoint, IsoDate, Nullable, type Principal, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { Destination, RedactedDestination } from '../../../platform/outbound/destinations.ts';
import {
  ALERT_LIST_DEFAULT,
  ALERT_LIST_MAX,
  ALERT_LIST_STATUSES,
  ALERT_STATUSES,
  BUDGET_SCOPES,
  type CostAlertView,
  type CostBudgetService,
  type CostBudgetView,
  EMPIRE_SCOPE_KEY,
  JOB_NAME,
  MONTHLY_USD_MAX,
  THRESHOLD_MAX,
  THRESHOLD_MIN,
  THRESHOLDS_MAX,
} from './service.ts';

/**
 * Cost budgets and alerts (spec B group 4 `cost/budgets`, `cost/alerts`, `cost/alerts/{id}/ack`
 * and `/resolve`; D6 `POST cost/budgets`). docs/cost/alerts.md.
 */

const generatedAt = '2026-11-24T08:00:00.000Z';
const TAG = 'cost';
const UI_PATH = '/cost';

const Scope = StringEnum(BUDGET_SCOPES, { description: '`empire` (every cost record), `toolset` or `workspace` (the records of one).' });
const Month = Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', description: 'YYYY-MM, UTC.' });
const Usd = (description: string) => Type.Number({ description });

const CostBudget = Type.Object({
  id: Type.String({ format: 'uuid' }),
  scope: Scope,
  scopeKey: Type.String({ description: `\`${EMPIRE_SCOPE_KEY}\` for the empire; the toolset name or the workspace key.` }),
  monthlyUsd: Usd('The monthly budget in dollars (exact to the micro-dollar).'),
  alertAtPct: Type.Array(Type.Integer(), { description: 'Thresholds in percent of monthlyUsd, ascending.' }),
  monthBucket: Month,
  observedUsd: Usd('Spend of the month so far (cost records dated in the month) in dollars.'),
  observedPct: Type.Number({ description: 'observedUsd as a percentage of monthlyUsd, cut (not rounded) to two decimals: a threshold is crossed exactly when observedPct ≥ it.' }),
  crossedThresholds: Type.Array(Type.Integer(), { description: 'The thresholds of alertAtPct at or below observedPct, ascending.' }),
  destinations: Type.Array(RedactedDestination, { description: 'Where fired alerts are sent; redacted (URL origins only, never a webhook secret). Empty: alerts are listed and audited but not sent.' }),
  createdAt: IsoDate,
  updatedAt: IsoDate,
});

const CostAlert = Type.Object({
  id: Type.String({ format: 'uuid' }),
  budgetId: Type.String({ format: 'uuid' }),
  scope: Scope,
  scopeKey: Type.String(),
  monthBucket: Month,
  thresholdPct: Type.Integer({ description: 'The threshold crossed; one alert per (budget, month, threshold).' }),
  monthlyUsd: Usd('The budget when the alert fired.'),
  observedUsd: Usd('The month\'s spend when the alert fired.'),
  status: StringEnum(ALERT_STATUSES),
  firedAt: IsoDate,
  ackedAt: Nullable({ ...IsoDate, description: 'Stamped by ack (refreshed by a repeated ack) and by resolving an open alert.' }),
  ackedBy: Nullable(Type.String({ description: 'The username of the operator who acknowledged (or resolved an open alert).' })),
  resolvedAt: Nullable(IsoDate),
});

const AlertRef = Type.Object({ id: Type.String({ format: 'uuid' }), status: StringEnum(ALERT_STATUSES) });

const exampleDestinations = [{ kind: 'webhook' as const, url: 'https://alerts.example.com/…', secretSet: true as const }];
const exampleBudget: CostBudgetView = {
  id: '6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0',
  scope: 'toolset',
  scopeKey: 'crawler-lab',
  monthlyUsd: 1500,
  alertAtPct: [50, 80, 100],
  monthBucket: '2026-11',
  observedUsd: 1218.75,
  observedPct: 81.25,
  crossedThresholds: [50, 80],
  destinations: exampleDestinations,
  createdAt: '2026-11-01T09:00:00.000Z',
  updatedAt: '2026-11-20T14:30:00.000Z',
};
const exampleAlert: CostAlertView = {
  id: '0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d',
  budgetId: exampleBudget.id,
  scope: 'toolset',
  scopeKey: 'crawler-lab',
  monthBucket: '2026-11',
  thresholdPct: 80,
  monthlyUsd: 1500,
  observedUsd: 1204.1,
  status: 'acknowledged',
  firedAt: '2026-11-23T22:15:00.000Z',
  ackedAt: '2026-11-24T07:58:12.000Z',
  ackedBy: 'admin',
  resolvedAt: null,
};
const exampleOpen: CostAlertView = {
  ...exampleAlert,
  id: '1b0c9d8e-7f6a-4b4c-8d3e-2f1a0b9c8d7e',
  scope: 'empire',
  scopeKey: EMPIRE_SCOPE_KEY,
  budgetId: '2c1d0e9f-8a7b-4c5d-9e4f-3a2b1c0d9e8f',
  thresholdPct: 100,
  monthlyUsd: 20000,
  observedUsd: 20012.5,
  status: 'open',
  firedAt: '2026-11-24T06:00:00.000Z',
  ackedAt: null,
  ackedBy: null,
};

const AlertId = Type.Object({ id: Type.String({ format: 'uuid' }) }, { examples: [{ id: exampleAlert.id }] });
const who = (principal: Principal | null) => principal as Principal;

export function costBudgetEndpoints(service: CostBudgetService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'setCostBudget',
      title: 'Set a cost budget',
      description:
        `Creates or changes the monthly budget of one scope (upsert by scope and scopeKey): \`empire\` with scopeKey \`${EMPIRE_SCOPE_KEY}\` (every cost record), \`toolset\` with a toolset name, \`workspace\` with a workspace key. ` +
        `\`monthlyUsd\` is dollars above 0 with at most 6 decimals (400 \`invalid-amount\`); \`alertAtPct\` 1 to ${THRESHOLDS_MAX} distinct whole percentages from ${THRESHOLD_MIN} to ${THRESHOLD_MAX}, stored ascending. ` +
        '`destinations` (0 to 10, shared with alert rules; docs/platform/outbound.md) receive fired alerts; one that cannot be used is 400 `invalid-destinations`; [] sends nothing; omitted, a new budget takes the configured chat webhook and metrics forwarder and an existing one keeps its own. ' +
        `The \`${JOB_NAME}\` job opens the alerts. A token bound to toolsets sets toolset budgets of its toolsets only. Audited as \`cost.budget-set\` (a call that changes nothing is not). Answers the budget with the current month's figures.`,
      method: 'POST',
      path: `${V1}/cost/budgets`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_PATH,
      body: Type.Object(
        {
          scope: Scope,
          scopeKey: Type.String({ minLength: 1, maxLength: 128, description: `\`${EMPIRE_SCOPE_KEY}\` for the empire; a toolset name for a toolset; a workspace key for a workspace.` }),
          monthlyUsd: Type.Number({ minimum: 0.000001, maximum: MONTHLY_USD_MAX, description: 'Dollars from 0.000001 (above 0), at most 6 decimals and 15 significant digits.' }),
          alertAtPct: Type.Array(Type.Integer({ minimum: THRESHOLD_MIN, maximum: THRESHOLD_MAX }), {
            minItems: 1,
            maxItems: THRESHOLDS_MAX,
            uniqueItems: true,
            description: 'Percentages of monthlyUsd that open an alert when the month\'s spend reaches them; stored ascending.',
          }),
          destinations: Type.Optional(Type.Array(Destination, { maxItems: 10, description: 'Where fired alerts go; [] none. Omitted: the deployment defaults for a new budget, unchanged for an existing one.' })),
        },
        {
          additionalProperties: false,
          examples: [
            {
              scope: 'toolset',
              scopeKey: 'crawler-lab',
              monthlyUsd: 1500,
              alertAtPct: [50, 80, 100],
              destinations: [{ kind: 'webhook', url: 'https://alerts.example.com/cost', secret: 'whsec-example-0123456789abcdef' }],
            },
          ],
        },
      ),
      response: { schemaId: 'svc-cost-budget.v1', fields: { ok: Type.Literal(true), budget: CostBudget } },
      example: { schema: 'svc-cost-budget.v1', generatedAt, ok: true, budget: exampleBudget },
      handler: async ({ principal, body, requestId }) => service.set({ principal: who(principal), requestId }, body),
    }),
    defineEndpoint({
      id: 'listCostBudgets',
      title: 'List cost budgets',
      description:
        'Every budget with the current calendar month\'s figures (UTC): observedUsd (the spend of cost records dated in the month so far), observedPct (cut to two decimals) and crossedThresholds (the thresholds at or below observedPct). ' +
        'Ordered by scope, then scopeKey. A token bound to toolsets sees the toolset budgets of its toolsets only.',
      method: 'GET',
      path: `${V1}/cost/budgets`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      response: { schemaId: 'svc-cost-budgets.v1', fields: { budgets: Type.Array(CostBudget) } },
      example: { schema: 'svc-cost-budgets.v1', generatedAt, budgets: [exampleBudget] },
      handler: async ({ principal }) => service.list(principal),
    }),
    defineEndpoint({
      id: 'listCostAlerts',
      title: 'List cost alerts',
      description:
        `Cost alerts newest first (firedAt), of one status (\`open\` by default; \`acknowledged\`, \`resolved\`, or \`all\`); \`limit\` 1 to ${ALERT_LIST_MAX}, default ${ALERT_LIST_DEFAULT}. ` +
        '`openCount` is the number of open alerts whatever `status` and `limit` say. A token bound to toolsets sees the alerts of its toolsets\' budgets only.',
      method: 'GET',
      path: `${V1}/cost/alerts`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      query: Type.Object(
        {
          limit: Type.Optional(Type.String({ maxLength: 4, description: `Alerts to answer: a whole number from 1 to ${ALERT_LIST_MAX}; default ${ALERT_LIST_DEFAULT}.` })),
          status: Type.Optional(StringEnum(ALERT_LIST_STATUSES, { description: 'Default `open`.' })),
        },
        { examples: [{ limit: '50', status: 'all' }] },
      ),
      response: {
        schemaId: 'svc-cost-alerts.v1',
        fields: {
          status: StringEnum(ALERT_LIST_STATUSES),
          openCount: Type.Integer({ minimum: 0, description: 'Open alerts, whatever status and limit say.' }),
          alerts: Type.Array(CostAlert),
        },
      },
      example: { schema: 'svc-cost-alerts.v1', generatedAt, status: 'all', openCount: 1, alerts: [exampleOpen, exampleAlert] },
      handler: async ({ principal, query }) => service.listAlerts(principal, query),
    }),
    alertMoveEndpoint({
      id: 'acknowledgeCostAlert',
      title: 'Acknowledge a cost alert',
      description:
        'open → acknowledged, stamping ackedAt and ackedBy (the caller\'s username); on an acknowledged alert the stamps are refreshed and the status stays. A resolved alert is 409 `conflict`; an unknown id 404. ' +
        'Recorded as a `cost-alert-acknowledged` audit fact. A token bound to toolsets acknowledges alerts of its toolsets\' budgets only.',
      path: 'ack',
      schemaId: 'svc-cost-alert-ack.v1',
      status: 'acknowledged',
      move: service.acknowledge,
    }),
    alertMoveEndpoint({
      id: 'resolveCostAlert',
      title: 'Resolve a cost alert',
      description:
        'open or acknowledged → resolved, stamping resolvedAt; resolving an open alert also stamps ackedAt and ackedBy (the caller\'s username). A resolved alert is 409 `conflict`; an unknown id 404. ' +
        'Recorded as a `cost-alert-resolved` audit fact. A token bound to toolsets resolves alerts of its toolsets\' budgets only.',
      path: 'resolve',
      schemaId: 'svc-cost-alert-resolve.v1',
      status: 'resolved',
      move: service.resolve,
    }),
  ];
}

/** `POST {v1}/cost/alerts/{id}/ack` and `/resolve`: the same shape, one move of A's state table each. */
function alertMoveEndpoint(
  entry: { id: string; title: string; description: string; path: 'ack' | 'resolve'; schemaId: string; status: 'acknowledged' | 'resolved'; move: CostBudgetService['acknowledge'] },
): Endpoint {
  return defineEndpoint({
    id: entry.id,
    title: entry.title,
    description: entry.description,
    method: 'POST',
    path: `${V1}/cost/alerts/{id}/${entry.path}`,
    auth: 'session-or-bearer',
    scope: 'write:alerts',
    tag: TAG,
    kind: 'write',
    uiPath: UI_PATH,
    params: AlertId,
    body: EmptyBody,
    errors: [409],
    response: { schemaId: entry.schemaId, fields: { ok: Type.Literal(true), alert: AlertRef } },
    example: { schema: entry.schemaId, generatedAt, ok: true, alert: { id: exampleAlert.id, status: entry.status } },
    handler: async ({ principal, params, requestId }) => entry.move({ principal: who(principal), requestId }, params.id),
  });
}
