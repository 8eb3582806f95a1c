/**
 * What other domains may use of the empire (docs/empire/README.md). Triage reads forecasts, lineage,
 * incidents and alert rules, and checks the predicates its rule proposer writes; federation merges
 * the overview and pools the ingest SLO; analytics borrows the daily facts and the triage agents their windows (empire/triage); the
 * graph reads events and incidents (empire/graph); trust reads replay and
 * incidents. `EmpireDomain` is what the app hands them; `ModelBudget` is the port the empire asks
 * triage's budget through.
 */
export type { EmpireDomain } from './wiring.ts';
export type { EventService, LineageEvent } from './events/service.ts';
export type { ForecastView, ModelBudget } from './forecast/service.ts';
export type { IncidentService, IncidentView } from './incidents/service.ts';
export type { DashboardService, OverviewRow } from './insights/dashboard.ts';
export { type FederatedOverviewProvider, FederatedOverviewFields, OverviewRowSchema, PerRegion } from './insights/endpoints.ts';
export { type Badge, SLO_BADGE_THRESHOLDS, sloBadge } from './insights/slo.ts';
export type { EmpireAlertService } from './alerts/service.ts';
export { checkPredicate, EmpirePredicate, normalizePredicate } from './alerts/predicates.ts';
export { type EmpireAnalyticsFacts, empireAnalyticsFacts } from './analytics/service.ts';
export { type EmpireTriageFacts, empireTriageFacts } from './triage/service.ts';
export { empireGraphFacts } from './graph/service.ts';
