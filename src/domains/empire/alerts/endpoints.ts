import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, V1 } from '../../../platform/http/registry.ts';
import { exampleFreshness, Freshness } from '../../../platform/freshness.ts';
import { deliveryQueryFields, exampleDelivery, RuleDelivery } from '../../../platform/outbound/deliveries.ts';
import { Destinations, RedactedDestination } from '../../../platform/outbound/destinations.ts';
import { TOOLSET_PATTERN } from '../../../platform/toolset-name.ts';
import { EMPIRE_ALERT_PRODUCER, type EmpireAlertRuleView, type EmpireAlertService } from './service.ts';
import { EmpirePredicate, EmpirePredicateBody } from './predicates.ts';

/** Empire alert rules (spec B group 2 `{v1}/empire/{toolset}/alerts`, and a change endpoint). */

const generatedAt = '2026-11-24T08:00:00.000Z';
const TAG = 'alerts';
const UI_PATH = '/empire/alerts';

const Toolset = Type.String({ pattern: TOOLSET_PATTERN, description: '3 to 128 characters: a letter, then letters, digits or -.', examples: ['crawler-lab'] });
const Tenant = Type.String({ minLength: 1, maxLength: 128, description: 'A source tenant, as the toolset\'s events name it.' });
const Name = Type.String({ minLength: 1, maxLength: 200 });

const EmpireAlertRule = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  toolset: Nullable(Type.String({ description: 'The toolset whose events the rule watches.' })),
  tenant: Nullable(Type.String({ description: 'Only this source tenant\'s events count; null for every tenant.' })),
  enabled: Type.Boolean(),
  predicate: EmpirePredicate,
  destinations: Type.Array(RedactedDestination, { description: 'Redacted: URL origins only, never a webhook secret.' }),
  createdAt: IsoDate,
  lastFiredAt: Nullable(IsoDate),
  silenceUntil: Nullable(IsoDate),
  evaluatedUntil: Nullable({ ...IsoDate, description: 'Events received up to here have been evaluated against the rule.' }),
});

const exampleRule: EmpireAlertRuleView = {
  id: '3c2d1e0f-4a9b-4c7d-8e5f-6a7b8c9d0e1f',
  name: 'Crawl flood',
  toolset: 'crawler-lab',
  tenant: null,
  enabled: true,
  predicate: { kind: 'empire_count_gte', count: 500, windowMinutes: 15, eventType: 'crawl.page' },
  destinations: [
    { kind: 'slack', url: 'https://hooks.slack.com/…' },
    { kind: 'webhook', url: 'https://alerts.example.com/…', secretSet: true },
  ],
  createdAt: '2026-11-20T09:00:00.000Z',
  lastFiredAt: '2026-11-24T07:42:00.000Z',
  silenceUntil: null,
  evaluatedUntil: '2026-11-24T07:59:00.000Z',
};
const exampleJoin: EmpireAlertRuleView = {
  ...exampleRule,
  id: '4d3e2f1a-5b0c-4d8e-9f6a-7b8c9d0e1f2a',
  name: 'Scraped and probed',
  tenant: 'docs-mirror',
  predicate: { kind: 'cross_toolset_join', otherToolset: 'probe-kit', windowMinutes: 60, minTenants: 1 },
  destinations: [{ kind: 'metrics' }],
  lastFiredAt: null,
};

const who = (principal: Principal | null) => principal as Principal;

export function empireAlertEndpoints(deps: { alerts: EmpireAlertService }): Endpoint[] {
  const { alerts } = deps;
  return [
    defineEndpoint({
      id: 'listEmpireAlerts',
      title: 'List empire alert rules',
      description:
        'Every alert rule of a toolset, enabled and disabled, oldest first; with `tenant`, only the rules made for that source tenant. A toolset nobody made rules for (toolsets exist by sending events) has none. Destinations are redacted: URL origins only, never a webhook secret. A token bound to other toolsets is refused (403). ' +
        'The job `empire-alert-evaluate` evaluates enabled rules every minute over the events received up to 60 s before it runs: `freshness.asOf` is the earliest `evaluatedUntil` of the listed enabled rules (null, with `reason`, when one has not been evaluated yet or none is enabled).',
      method: 'GET',
      path: `${V1}/empire/{toolset}/alerts`,
      auth: 'session-or-bearer',
      scope: 'read:alerts',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      params: Type.Object({ toolset: Toolset }, { examples: [{ toolset: 'crawler-lab' }] }),
      query: Type.Object(
        { tenant: Type.Optional({ ...Tenant, description: 'Only the rules made for this source tenant; absent lists every rule of the toolset.' }) },
        { examples: [{ tenant: 'acme' }] },
      ),
      response: {
        schemaId: 'svc-empire-alerts.v1',
        fields: {
          tenant: Nullable(Type.String({ description: 'The tenant asked for; null for all.' })),
          toolset: Type.String(),
          rules: Type.Array(EmpireAlertRule),
          freshness: Freshness,
        },
      },
      example: {
        schema: 'svc-empire-alerts.v1',
        generatedAt,
        tenant: null,
        toolset: 'crawler-lab',
        rules: [exampleRule, exampleJoin],
        freshness: exampleFreshness(EMPIRE_ALERT_PRODUCER, exampleRule.evaluatedUntil!),
      },
      handler: async ({ params, query, principal }) => alerts.list(params.toolset, query.tenant, principal),
    }),
    defineEndpoint({
      id: 'listEmpireAlertDeliveries',
      title: 'List the deliveries of a toolset\'s alert rules',
      description:
        'What the notifications of a toolset\'s alert rules became, one row per firing and destination, newest first: status (`pending`, `delivered`, `failed`), attempts, the last HTTP status and error, and when the next retry is due. ' +
        'Filters: `tenant` (the rules made for that source tenant), `rule` (a rule of another toolset lists nothing), `destination` (a position in the rule\'s `destinations`; needs `rule`), `kind`, `status`; paged with `cursor` and `limit`. ' +
        'Destinations are redacted: URL origins only, never a webhook secret or URL path; errors name hosts only. A token bound to other toolsets is refused (403).',
      method: 'GET',
      path: `${V1}/empire/{toolset}/alerts/deliveries`,
      auth: 'session-or-bearer',
      scope: 'read:alerts',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      params: Type.Object({ toolset: Toolset }, { examples: [{ toolset: 'crawler-lab' }] }),
      query: Type.Object(
        { tenant: Type.Optional({ ...Tenant, description: 'Only the deliveries of the rules made for this source tenant.' }), ...deliveryQueryFields },
        {
          examples: [
            { tenant: 'acme', rule: exampleRule.id, destination: 1, kind: 'webhook', status: 'pending', cursor: '2026-11-24T08:00:00.000Z', limit: 50 },
          ],
        },
      ),
      response: {
        schemaId: 'svc-empire-alert-deliveries.v1',
        fields: {
          tenant: Nullable(Type.String({ description: 'The tenant asked for; null for all.' })),
          toolset: Type.String(),
          deliveries: Type.Array(RuleDelivery),
          nextCursor: Nullable(Type.String()),
        },
      },
      example: {
        schema: 'svc-empire-alert-deliveries.v1',
        generatedAt,
        tenant: null,
        toolset: 'crawler-lab',
        deliveries: [exampleDelivery({ id: exampleRule.id, name: exampleRule.name }, { firedAt: '2026-11-24T07:42:00.000Z', next: '2026-11-24T07:44:30.000Z' })],
        nextCursor: null,
      },
      handler: async ({ params, query, principal }) => {
        const { tenant, ...filter } = query;
        return alerts.deliveries(params.toolset, tenant, filter, principal);
      },
    }),
    defineEndpoint({
      id: 'createEmpireAlert',
      title: 'Create an empire alert rule',
      description:
        'Creates an alert rule on a toolset\'s events. `predicate` is one of `empire_count_gte`, `cross_toolset_join`, `graph_lag_gte` (docs/empire/alerts.md): a wrong shape is 400 `invalid-body`, a value outside its range (or a join of the toolset with itself) 400 `invalid-predicate`. ' +
        '`tenant` restricts the rule to one source tenant. `destinations` are 1 to 10 of slack, webhook (HMAC-signed), metrics and ci_dispatch, shared with honeypot rules (docs/platform/outbound.md); one that cannot be used is 400 `invalid-destinations`. ' +
        'The `empire-alert-evaluate` job evaluates enabled rules every minute. Audited as `empire-alert.create` with redacted destinations.',
      method: 'POST',
      path: `${V1}/empire/{toolset}/alerts`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_PATH,
      params: Type.Object({ toolset: Toolset }, { examples: [{ toolset: 'crawler-lab' }] }),
      body: Type.Object(
        {
          name: Name,
          predicate: EmpirePredicateBody,
          destinations: Destinations,
          tenant: Type.Optional(Tenant),
          enabled: Type.Optional(Type.Boolean({ description: 'Default true.' })),
        },
        {
          additionalProperties: false,
          examples: [
            {
              name: 'Crawl burst for acme',
              predicate: { kind: 'empire_count_gte', count: 500, windowMinutes: 15, eventType: 'crawl.started' },
              destinations: [{ kind: 'webhook', url: 'https://alerts.example.com/observatory', secret: 'whsec-example-0123456789abcdef' }],
              tenant: 'acme',
              enabled: true,
            },
          ],
        },
      ),
      response: {
        schemaId: 'svc-empire-alert-create.v1',
        fields: { ok: Type.Literal(true), id: Type.String({ format: 'uuid' }), toolset: Type.String() },
      },
      example: { schema: 'svc-empire-alert-create.v1', generatedAt, ok: true, id: exampleRule.id, toolset: 'crawler-lab' },
      handler: async ({ principal, params, body, requestId }) => alerts.create({ principal: who(principal), requestId }, { ...body, toolset: params.toolset }),
    }),
    defineEndpoint({
      id: 'updateEmpireAlert',
      title: 'Change an empire alert rule',
      description:
        'Changes a rule\'s `name`, `enabled` and `silenceUntil` (ISO 8601, or null to lift a silence). While `now` is before `silenceUntil` a rule that matches sends nothing and the window it read is consumed. ' +
        'Enabling a disabled rule starts its evaluation afresh at that moment. Fields left out are kept; a call that changes nothing is not audited; a change is audited as `empire-alert.update`. 404 for an unknown id.',
      method: 'POST',
      path: `${V1}/empire/alerts/{id}`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_PATH,
      params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { examples: [{ id: '4e5f6a7b-8c9d-4e0f-a1b2-c3d4e5f6a7b8' }] }),
      body: Type.Object(
        {
          name: Type.Optional(Name),
          enabled: Type.Optional(Type.Boolean()),
          silenceUntil: Type.Optional(Nullable(IsoDate)),
        },
        { additionalProperties: false, examples: [{ name: 'Crawl burst for acme (business hours)', enabled: true, silenceUntil: null }] },
      ),
      response: { schemaId: 'svc-empire-alert.v1', fields: { rule: EmpireAlertRule } },
      example: { schema: 'svc-empire-alert.v1', generatedAt, rule: { ...exampleRule, silenceUntil: '2026-11-24T12:00:00.000Z' } },
      handler: async ({ principal, params, body, requestId }) => alerts.update({ principal: who(principal), requestId }, params.id, body),
    }),
  ];
}
