/**
 * What other domains may use of cost (docs/cost/README.md): compliance reads the budgets (control
 * evidence); analytics reads the facts cost lends the warehouse.
 */
export { type CostAnalyticsFacts, costAnalyticsFacts } from './analytics/service.ts';
export type { CostBudgetService } from './budgets/service.ts';
export type { CostDomain } from './wiring.ts';
