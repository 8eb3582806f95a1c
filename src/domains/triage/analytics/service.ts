import * as repo from './repository.ts';

/**
 * What triage offers the analytics warehouse (docs/analytics/README.md): operator decisions per UTC day
 * and toolset, and which days changed since a time. Reads take the executor they run on.
 */
export const triageAnalyticsFacts = {
  decisionDaysSince: repo.decisionDaysSince,
  decisionsPerDay: repo.decisionsPerDay,
};

export type TriageAnalyticsFacts = typeof triageAnalyticsFacts;
