import type { HoneypotGraphSource } from '../../graph/index.ts';
import * as repo from './repository.ts';

/**
 * What the honeypot offers the knowledge graph (docs/graph/materialiser.md, "Kinds and sources"):
 * its events as a stream (fingerprints, clusters, claimed vendors, the tenants they were seen on)
 * and its tenants, compared whole each run.
 */
export const honeypotGraphFacts: HoneypotGraphSource = {
  eventsAfter: repo.eventsAfter,
  tenants: repo.tenants,
  replay: { eventsUpTo: repo.eventsUpTo, tenants: repo.tenantSlugs },
};
