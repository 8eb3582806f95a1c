import * as repo from './repository.ts';

/**
 * What the empire offers the analytics warehouse (docs/analytics/README.md): events per UTC day, source
 * tenant and toolset; incidents opened and resolved per day, toolset and severity; and which days
 * changed since a time. Every read takes the executor it runs on (the rollup's transaction).
 */
export const empireAnalyticsFacts = {
  eventDaysReceivedSince: repo.eventDaysReceivedSince,
  eventsPerDay: repo.eventsPerDay,
  incidentDaysChangedSince: repo.incidentDaysChangedSince,
  incidentsOpenedPerDay: repo.incidentsOpenedPerDay,
  incidentsResolvedPerDay: repo.incidentsResolvedPerDay,
};

export type EmpireAnalyticsFacts = typeof empireAnalyticsFacts;
