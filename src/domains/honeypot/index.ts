/**
 * What other domains may use of honeypot: the domain handle app.ts builds (tenants, recording
 * events, derived keys, the vendor registry), the daily facts it lends the analytics warehouse,
 * the window reads it lends the triage agents and the event and tenant reads the graph draws on.
 */
export { honeypotAnalyticsFacts, type HoneypotAnalyticsFacts } from './analytics/service.ts';
export { honeypotGraphFacts } from './graph/service.ts';
export { honeypotTriageFacts, type HoneypotTriageFacts } from './triage/service.ts';
export type { HoneypotDomain } from './wiring.ts';
