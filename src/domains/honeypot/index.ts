/**
 * What other domains may use of honeypot: the domain handle app.ts builds (tenants, recording
 * events, derived keys, the vendor registry) and the daily facts it lends the analytics warehouse.
 */
export { honeypotAnalyticsFacts, type HoneypotAnalyticsFacts } from './analytics/service.ts';
export type { HoneypotDomain } from './wiring.ts';
