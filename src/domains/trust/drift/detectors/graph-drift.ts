import type { Breach, Detector } from '../kinds.ts';

/** What graph-drift reads of the graph materialiser. */
export interface GraphReplayReads {
  latestOkRun(): Promise<{ id: string; finishedAt: string } | null>;
  replay(materialisationId: string): Promise<{
    materialisationId: string;
    matches: boolean;
    storedDigest: string;
    liveDigest: string;
    addedNodes: string[];
    removedNodes: string[];
    addedEdges: string[];
    removedEdges: string[];
  }>;
}

export const GRAPH_SOURCE = 'graph-materialisation';
export const GRAPH_SUBJECT = 'knowledge-graph';
/** Identities of each difference list kept in the payload. */
const LISTED = 10;

/**
 * graph-drift: the newest completed graph materialisation is replayed from its sources (the replay
 * endpoint's work: one read-only snapshot, difference lists capped at 50). No completed
 * materialisation: nothing to compare, no breach. One subject, the knowledge graph, so drift that
 * persists across runs stays one event; a later run whose replay matches clears it.
 */
export function graphDriftDetector(graph: GraphReplayReads): Detector {
  return {
    kind: 'graph-drift',
    async scan() {
      const run = await graph.latestOkRun();
      if (run === null) return [];
      const r = await graph.replay(run.id);
      if (r.matches) return [];
      const counts = `${r.addedNodes.length} node(s) and ${r.addedEdges.length} edge(s) the sources give but the graph lacks, ${r.removedNodes.length} node(s) and ${r.removedEdges.length} edge(s) the graph holds but the sources no longer give (each list capped at 50)`;
      const breach: Breach = {
        source: GRAPH_SOURCE,
        sourceId: GRAPH_SUBJECT,
        severity: 'major',
        description: `The replay of graph materialisation ${r.materialisationId} (finished ${run.finishedAt}) does not match: stored digest ${r.storedDigest.slice(0, 12)}…, live ${r.liveDigest.slice(0, 12)}…; ${counts}.`,
        payload: {
          materialisationId: r.materialisationId,
          storedDigest: r.storedDigest,
          liveDigest: r.liveDigest,
          addedNodes: r.addedNodes.slice(0, LISTED),
          removedNodes: r.removedNodes.slice(0, LISTED),
          addedEdges: r.addedEdges.slice(0, LISTED),
          removedEdges: r.removedEdges.slice(0, LISTED),
        },
      };
      return [breach];
    },
  };
}
