import * as repo from './repository.ts';

/**
 * What the honeypot offers the analytics warehouse (docs/analytics/README.md): its events, LIAR events
 * and opened tarpits per UTC day and tenant, and which days changed since a time. Every read takes
 * the executor it runs on, so the rollup reads inside its own transaction.
 */
export const honeypotAnalyticsFacts = {
  eventDaysReceivedSince: repo.eventDaysReceivedSince,
  eventsPerDay: repo.eventsPerDay,
  tarpitDaysOpenedSince: repo.tarpitDaysOpenedSince,
  tarpitsPerDay: repo.tarpitsPerDay,
};

export type HoneypotAnalyticsFacts = typeof honeypotAnalyticsFacts;
