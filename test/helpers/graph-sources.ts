import { empireGraphFacts } from '../../src/domains/empire/index.ts';
import type { GraphSources } from '../../src/domains/graph/index.ts';
import { honeypotGraphFacts } from '../../src/domains/honeypot/index.ts';
import { provenanceGraphFacts } from '../../src/domains/provenance/index.ts';

/** The source reads app.ts hands the graph materialiser, for tests and benches that build one themselves. */
export const graphSources: GraphSources = { honeypot: honeypotGraphFacts, empire: empireGraphFacts, provenance: provenanceGraphFacts };
