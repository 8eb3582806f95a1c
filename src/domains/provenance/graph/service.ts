import type { ProvenanceGraphSource } from '../../graph/index.ts';
import * as repo from './repository.ts';

/**
 * What provenance offers the knowledge graph (docs/graph/materialiser.md, "Kinds and sources"): its
 * admission decisions as a stream (Attestation nodes, the keys that signed them) and its toolset
 * keys, compared whole each run.
 */
export const provenanceGraphFacts: ProvenanceGraphSource = {
  attestationsAfter: repo.attestationsAfter,
  keys: repo.keys,
  replay: { attestationsUpTo: repo.attestationsUpTo, keys: repo.keyToolsets },
};
