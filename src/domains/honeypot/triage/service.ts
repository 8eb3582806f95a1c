import * as repo from './repository.ts';

/**
 * What the honeypot offers the triage agents (docs/triage/README.md, "What the agents read"): the
 * tenants' windows, the tarpits triggered, the fingerprint clusters of a window and events by id
 * for a postmortem's lineage. Every read takes the executor it runs on.
 */
export const honeypotTriageFacts = {
  tenantWindows: repo.honeypotWindows,
  tarpitsTriggered: repo.tarpitsTriggered,
  clusters: repo.honeypotClusters,
  eventsById: repo.honeypotEventsById,
  /** Condition for the proposals a toolset-bound credential may see (a cited honeypot event is toolset `honeypot`'s). */
  isHoneypotEvent: repo.isHoneypotEvent,
};

export type HoneypotTriageFacts = typeof honeypotTriageFacts;
export type { TenantWindow, TriggeredTarpit } from './repository.ts';
