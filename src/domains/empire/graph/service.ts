import type { EmpireGraphSource } from '../../graph/index.ts';
import * as repo from './repository.ts';

/**
 * What the empire offers the knowledge graph (docs/graph/materialiser.md, "Kinds and sources"):
 * its events as a stream (with the causes a batch completes) and its incidents, compared whole
 * each run.
 */
export const empireGraphFacts: EmpireGraphSource = {
  eventsAfter: repo.eventsAfter,
  causePairs: repo.causePairs,
  incidents: repo.incidents,
  replay: { eventsUpTo: repo.eventsUpTo, incidents: repo.incidentEvents },
};
