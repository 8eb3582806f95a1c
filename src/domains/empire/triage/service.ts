import * as repo from './repository.ts';

/**
 * What the empire offers the triage agents (docs/triage/README.md, "What the agents read"): the
 * toolsets' windows (totals, event types, samples), cross-toolset tenants, open and resolved
 * incidents, and the enabled rules' predicates. Every read takes the executor it runs on; the last
 * two are SQL triage places in its own statements.
 */
export const empireTriageFacts = {
  toolsetTotals: repo.toolsetTotals,
  toolsetEventTypes: repo.toolsetEventTypes,
  toolsetSamples: repo.toolsetSamples,
  crossToolsetTenants: repo.crossToolsetTenants,
  openIncidents: repo.openIncidents,
  resolvedIncidents: repo.resolvedIncidents,
  enabledRulePredicates: repo.enabledRulePredicates,
  /** Relation (id, toolset, opened_at) for triage's incident recall, joined with its proposals in one statement. */
  incidentsOpenedSince: repo.incidentsOpenedSince,
  /** Condition for the proposals a toolset-bound credential may see (no cited event of another toolset). */
  eventOutsideReach: repo.eventOutsideReach,
};

export type EmpireTriageFacts = typeof empireTriageFacts;
