import { Type } from '@sinclair/typebox';
import { decodeTimeCursor } from '../db/paging.ts';
import { badRequest } from '../errors.ts';
import { IsoDate, Nullable, PageLimitParam, StringEnum, TimeCursorParam } from '../http/registry.ts';
import { type Destination, RedactedDestination } from './destinations.ts';
import type { DeliveryView, Outbound } from './service.ts';

/**
 * The delivery listings of alert rules (docs/platform/outbound.md, "Delivery listings"): what a rule's
 * notifications became, per destination. Shared by honeypot and empire rules, which fan out
 * through the same queue; each domain decides which rules a caller may see and passes them here.
 */

export const DELIVERIES_LIMIT_DEFAULT = 50;
export const DELIVERIES_LIMIT_MAX = 200;
export const DESTINATION_KINDS = ['slack', 'webhook', 'metrics', 'ci_dispatch'] as const;
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

/** The query members both listings take (each adds its own tenant or toolset). */
export const deliveryQueryFields = {
  rule: Type.Optional(Type.String({ format: 'uuid', description: 'Only this rule\'s deliveries.' })),
  destination: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 9,
      description: 'Only deliveries to this destination of the rule: its 0-based position in the rule\'s `destinations`. Needs `rule`.',
    }),
  ),
  kind: Type.Optional(StringEnum(DESTINATION_KINDS, { description: 'Only deliveries to destinations of this kind.' })),
  status: Type.Optional(StringEnum(DELIVERY_STATUSES, { description: '`pending` (not yet sent, or waiting for a retry), `delivered` or `failed` (given up).' })),
  cursor: TimeCursorParam,
  limit: PageLimitParam(DELIVERIES_LIMIT_DEFAULT, DELIVERIES_LIMIT_MAX),
};

export const RuleDelivery = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The delivery id, sent as `X-Observatory-Delivery` on every attempt.' }),
  rule: Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }),
  destinationIndex: Nullable(Type.Integer({ minimum: 0, description: 'The destination\'s 0-based position in the rule\'s `destinations`.' })),
  destination: RedactedDestination,
  status: StringEnum(DELIVERY_STATUSES),
  attempts: Type.Integer({ minimum: 0, description: 'Attempts made so far (at most 8).' }),
  lastStatus: Nullable(Type.Integer({ description: 'The HTTP status of the last attempt; null when no answer came (timeout, connection, DNS) or none was made.' })),
  lastError: Nullable(Type.String({ description: 'Why the last attempt failed (`HTTP 500`, a timeout, `refused: …`); null once delivered. Names hosts, never URL paths or secrets.' })),
  nextAttemptAt: Nullable({ ...IsoDate, description: 'When the next attempt is due (the next retry); null unless pending.' }),
  firedAt: IsoDate,
  createdAt: IsoDate,
  deliveredAt: Nullable(IsoDate),
});

export interface RuleDeliveryView extends Omit<DeliveryView, 'source' | 'sourceId'> {
  rule: { id: string; name: string };
  destinationIndex: number | null;
  firedAt: string;
}

export interface DeliveryQuery {
  rule?: string | undefined;
  destination?: number | undefined;
  kind?: Destination['kind'] | undefined;
  status?: DeliveryView['status'] | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
}

/** A rule as the listing needs it: its id, name and destinations as stored (never returned). */
export interface ListedRule {
  id: string;
  name: string;
  destinations: readonly Destination[];
}

/**
 * One page of the deliveries of `rules` (the rules the caller may see, of one producer `source`),
 * filtered by `query`. A `rule` outside `rules` lists nothing, exactly like a rule without
 * deliveries; a `destination` without `rule`, or past the rule's destinations, is 400 `invalid-query`.
 */
export async function listRuleDeliveries(
  outbound: Outbound,
  source: string,
  rules: readonly ListedRule[],
  query: DeliveryQuery,
): Promise<{ deliveries: RuleDeliveryView[]; nextCursor: string | null }> {
  const cursor = decodeTimeCursor(query.cursor);
  let listed = rules;
  if (query.rule !== undefined) listed = rules.filter((r) => r.id === query.rule);
  let destination: Destination | undefined;
  if (query.destination !== undefined) {
    if (query.rule === undefined) throw badRequest('invalid-query', 'query.destination needs query.rule: it is a position in that rule\'s destinations.', { field: 'query.destination' });
    const rule = listed[0];
    if (rule !== undefined) {
      destination = rule.destinations[query.destination];
      if (destination === undefined) {
        throw badRequest('invalid-query', `query.destination must be below ${rule.destinations.length}, the number of the rule's destinations.`, { field: 'query.destination' });
      }
    }
  }
  const byId = new Map(listed.map((r) => [r.id, r]));
  const page = await outbound.pageDeliveries({
    source,
    producers: new Map(listed.map((r) => [r.id, r.destinations])),
    destination,
    kind: query.kind,
    status: query.status,
    cursor,
    limit: query.limit ?? DELIVERIES_LIMIT_DEFAULT,
  });
  return {
    deliveries: page.deliveries.map(({ source: _source, sourceId, ...view }) => ({
      ...view,
      rule: { id: sourceId, name: byId.get(sourceId)?.name ?? '' },
    })),
    nextCursor: page.nextCursor,
  };
}

/** The example item of both listings: a webhook that keeps failing, waiting for its third attempt. */
export const exampleDelivery = (rule: { id: string; name: string }, at: { firedAt: string; next: string }): RuleDeliveryView => ({
  id: '2f1e0d9c-8b7a-4c6d-9e5f-4a3b2c1d0e9f',
  rule,
  destinationIndex: 1,
  destination: { kind: 'webhook', url: 'https://alerts.example.com/…', secretSet: true },
  status: 'pending',
  attempts: 2,
  lastStatus: 503,
  lastError: 'HTTP 503',
  nextAttemptAt: at.next,
  firedAt: at.firedAt,
  createdAt: at.firedAt,
  deliveredAt: null,
});
