import type { paths } from '../../../api/schema';

/** The 200 answer of one operation of the generated schema. */
type Answer<P extends keyof paths, M extends 'get' | 'post'> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer T } } };
}
  ? T
  : never;

export type HoneypotEvent = Answer<'/api/observatory/v1/honeypot/recent', 'get'>['events'][number];
export type Tenant = Answer<'/api/observatory/v1/honeypot/tenants', 'get'>['tenants'][number];
export type AlertRule = Answer<'/api/observatory/v1/honeypot/alerts', 'get'>['rules'][number];
export type Predicate = AlertRule['predicate'];
export type PredicateKind = Predicate['kind'];
export type UaClass = NonNullable<Extract<Predicate, { kind: 'event_count_above' }>['uaClass']>;
export type Delivery = Answer<'/api/observatory/v1/honeypot/alerts/deliveries', 'get'>['deliveries'][number];
export type DeliveryStatus = Delivery['status'];
export type Investigation = Answer<'/api/observatory/v1/honeypot/investigate', 'get'>;
export type Tarpit = Answer<'/api/observatory/v1/honeypot/tarpits', 'get'>['rows'][number];
