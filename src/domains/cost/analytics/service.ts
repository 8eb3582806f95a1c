import * as repo from './repository.ts';

/** What the cost center offers the analytics warehouse (docs/analytics/README.md). Reads take the executor they run on. */
export const costAnalyticsFacts = {
  recordDaysUpdatedSince: repo.recordDaysUpdatedSince,
  costPerDay: repo.costPerDay,
};

export type CostAnalyticsFacts = typeof costAnalyticsFacts;
