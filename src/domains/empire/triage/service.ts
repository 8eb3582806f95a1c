import * as repo from './repository.ts';

/**
 * What the empire offers the triage agents (docs/triage/README.md, "What the agents read"): the
 * toolsets' windows (totals, event types, samples), cross-toolset tenants, open and resolved
 * incidents, and the enabled rules' predicates. Every read takes the executor it runs on.
 */
export const empireTriageFacts = {
  toolsetTotals: repo.toolsetTotals,
  toolsetEventTypes: repo.toolsetEventTypes,
  toolsetSamples: repo.toolsetSamples,
  crossToolsetTenants: repo.crossToolsetTenants,
  openIncidents: repo.openIncidents,
  resolvedIncidents: repo.resolvedIncidents,
  enabledRulePredicates: repo.enabledRulePredicates,
};

export type EmpireTriageFacts = typeof empireTriageFacts;
