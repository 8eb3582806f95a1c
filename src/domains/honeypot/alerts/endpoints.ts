import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, V1 } from '../../../platform/http/registry.ts';
import { exampleFreshness, Freshness } from '../../../platform/freshness.ts';
import { deliveryQueryFields, exampleDelivery, RuleDelivery } from '../../../platform/outbound/deliveries.ts';
import { Destinations, RedactedDestination } from '../../../platform/outbound/destinations.ts';
import { ALERT_PRODUCER, type AlertRuleView, type AlertService } from './service.ts';
import { Predicate, PredicateBody } from './predicates.ts';

const generatedAt = '2026-11-23T08:00:00.000Z';
const slug = Type.String({ pattern: '^[a-z0-9-]{1,64}$' });

const AlertRule = Type.Object({
  id: Type.String({ format: 'uuid' }),
  tenant: Type.String({ description: 'The tenant slug.' }),
  name: Type.String(),
  enabled: Type.Boolean(),
  predicate: Predicate,
  destinations: Type.Array(RedactedDestination, { description: 'Redacted: URL origins only, never a webhook secret.' }),
  createdAt: IsoDate,
  lastFiredAt: Nullable(IsoDate),
  silenceUntil: Nullable(IsoDate),
  evaluatedUntil: Nullable({ ...IsoDate, description: 'Events received up to here have been evaluated against the rule.' }),
});

const exampleRule: AlertRuleView = {
  id: '5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d',
  tenant: 'docs-mirror',
  name: 'Liar flood',
  enabled: true,
  predicate: { kind: 'liar_rate_above', pct: 30, windowMinutes: 15, minEvents: 20 },
  destinations: [
    { kind: 'slack', url: 'https://hooks.slack.com/…' },
    { kind: 'webhook', url: 'https://alerts.example.com/…', secretSet: true },
  ],
  createdAt: '2026-11-20T09:00:00.000Z',
  lastFiredAt: '2026-11-23T07:42:00.000Z',
  silenceUntil: null,
  evaluatedUntil: '2026-11-23T07:59:00.000Z',
};

const who = (principal: Principal | null) => principal as Principal;

export function alertEndpoints(deps: { alerts: AlertService }): Endpoint[] {
  const { alerts } = deps;
  return [
    defineEndpoint({
      id: 'listHoneypotAlerts',
      title: 'List honeypot alert rules',
      description:
        'Every honeypot alert rule, enabled and disabled, of one tenant (`tenant`) or of all; 404 for an unknown tenant. Destinations are redacted: URL origins only, never a webhook secret. ' +
        'The job `alert-evaluate` evaluates enabled rules every minute over the events received up to 60 s before it runs: `freshness.asOf` is the earliest `evaluatedUntil` of the listed enabled rules (null, with `reason`, when one has not been evaluated yet or none is enabled).',
      method: 'GET',
      path: `${V1}/honeypot/alerts`,
      auth: 'session-or-bearer',
      scope: 'read:alerts',
      tag: 'alerts',
      kind: 'read',
      uiPath: '/honeypot/alerts',
      query: Type.Object({ tenant: Type.Optional({ ...slug, description: 'A tenant slug; absent lists the rules of every tenant.' }) }, { examples: [{ tenant: 'edge-eu' }] }),
      response: {
        schemaId: 'svc-observatory-alerts.v1',
        fields: { tenant: Nullable(Type.String({ description: 'The tenant asked for; null for all.' })), rules: Type.Array(AlertRule), freshness: Freshness },
      },
      example: { schema: 'svc-observatory-alerts.v1', generatedAt, tenant: 'docs-mirror', rules: [exampleRule], freshness: exampleFreshness(ALERT_PRODUCER, exampleRule.evaluatedUntil!) },
      handler: async ({ query }) => alerts.list(query.tenant),
    }),
    defineEndpoint({
      id: 'listHoneypotAlertDeliveries',
      title: 'List the deliveries of honeypot alert rules',
      description:
        'What the notifications of honeypot alert rules became, one row per firing and destination, newest first: status (`pending`, `delivered`, `failed`), attempts, the last HTTP status and error, and when the next retry is due. ' +
        'Filters: `tenant` (404 for an unknown one), `rule`, `destination` (a position in the rule\'s `destinations`; needs `rule`), `kind`, `status`; paged with `cursor` and `limit`. ' +
        'Destinations are redacted: URL origins only, never a webhook secret or URL path; errors name hosts only.',
      method: 'GET',
      path: `${V1}/honeypot/alerts/deliveries`,
      auth: 'session-or-bearer',
      scope: 'read:alerts',
      tag: 'alerts',
      kind: 'read',
      uiPath: '/honeypot/alerts',
      query: Type.Object(
        { tenant: Type.Optional({ ...slug, description: 'Only the deliveries of this tenant\'s rules; absent: of every tenant.' }), ...deliveryQueryFields },
        {
          examples: [
            { tenant: 'edge-eu', rule: exampleRule.id, destination: 1, kind: 'webhook', status: 'pending', cursor: '2026-11-23T08:00:00.000Z', limit: 50 },
          ],
        },
      ),
      response: {
        schemaId: 'svc-observatory-alert-deliveries.v1',
        fields: {
          tenant: Nullable(Type.String({ description: 'The tenant asked for; null for all.' })),
          deliveries: Type.Array(RuleDelivery),
          nextCursor: Nullable(Type.String()),
        },
      },
      example: {
        schema: 'svc-observatory-alert-deliveries.v1',
        generatedAt,
        tenant: 'docs-mirror',
        deliveries: [exampleDelivery({ id: exampleRule.id, name: exampleRule.name }, { firedAt: '2026-11-23T07:42:00.000Z', next: '2026-11-23T07:44:30.000Z' })],
        nextCursor: null,
      },
      handler: async ({ query }) => {
        const { tenant, ...filter } = query;
        return alerts.deliveries(tenant, filter);
      },
    }),
    defineEndpoint({
      id: 'createHoneypotAlert',
      title: 'Create a honeypot alert rule',
      description:
        'Creates an alert rule for a tenant (spec D6). `predicate` is one of the documented union (docs/honeypot/alerts.md): a wrong shape is 400 `invalid-body`, a value outside its range 400 `invalid-predicate`. ' +
        '`destinations` are 1 to 10 of slack, webhook (HMAC-signed), metrics and ci_dispatch (docs/platform/outbound.md); one that cannot be used (an unconfigured integration, a refused URL) is 400 `invalid-destinations`. ' +
        'The `alert-evaluate` job evaluates enabled rules every minute. 404 for an unknown tenant. Audited with redacted destinations.',
      method: 'POST',
      path: `${V1}/honeypot/alerts`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: 'alerts',
      kind: 'write',
      uiPath: '/honeypot/alerts',
      body: Type.Object({
        tenant: slug,
        name: Type.String({ minLength: 1, maxLength: 200 }),
        predicate: PredicateBody,
        destinations: Destinations,
        enabled: Type.Optional(Type.Boolean({ description: 'Default true.' })),
      }, {
        examples: [
          {
            tenant: 'edge-eu',
            name: 'Liars above 25% in an hour',
            predicate: { kind: 'liar_rate_above', pct: 25, windowMinutes: 60, minEvents: 20 },
            destinations: [{ kind: 'webhook', url: 'https://alerts.example.com/observatory', secret: 'whsec-example-0123456789abcdef' }],
            enabled: true,
          },
        ],
      }),
      response: {
        schemaId: 'svc-observatory-alert-create.v1',
        fields: { ok: Type.Literal(true), id: Type.String({ format: 'uuid' }) },
      },
      example: { schema: 'svc-observatory-alert-create.v1', generatedAt, ok: true, id: exampleRule.id },
      handler: async ({ principal, body, requestId }) => alerts.create({ principal: who(principal), requestId }, body),
    }),
    defineEndpoint({
      id: 'updateHoneypotAlert',
      title: 'Change a honeypot alert rule',
      description:
        'Changes a rule\'s `name`, `enabled` and `silenceUntil` (ISO 8601, or null to lift a silence). While `now` is before `silenceUntil` a rule that matches sends nothing and the events it covered are consumed. ' +
        'Enabling a disabled rule starts its evaluation afresh at that moment. Fields left out are kept; a call that changes nothing is not audited. 404 for an unknown id.',
      method: 'POST',
      path: `${V1}/honeypot/alerts/{id}`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: 'alerts',
      kind: 'write',
      uiPath: '/honeypot/alerts',
      params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { examples: [{ id: '0b6f4c1e-8a2d-4e7b-9c3f-5d1a7e9b2c40' }] }),
      body: Type.Object(
        {
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          enabled: Type.Optional(Type.Boolean()),
          silenceUntil: Type.Optional(Nullable(IsoDate)),
        },
        { additionalProperties: false, examples: [{ name: 'Liars above 25% in an hour (night shift)', enabled: true, silenceUntil: null }] },
      ),
      response: { schemaId: 'svc-observatory-alert.v1', fields: { rule: AlertRule } },
      example: { schema: 'svc-observatory-alert.v1', generatedAt, rule: { ...exampleRule, silenceUntil: '2026-11-23T12:00:00.000Z' } },
      handler: async ({ principal, params, body, requestId }) => alerts.update({ principal: who(principal), requestId }, params.id, body),
    }),
  ];
}
