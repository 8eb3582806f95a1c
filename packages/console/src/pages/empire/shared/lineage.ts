import type { GraphEdge, GraphNode } from '../../../components';

interface LineageEvent {
  eventId: string;
  id: string;
  toolset: string;
  eventType: string;
  ts: string;
  tenant: string | null;
  causedBy: string | null;
  compatMode: boolean;
  depth: number;
}

export interface LineageRow extends LineageEvent {
  side: 'upstream' | 'focal' | 'downstream';
  /** Causes first, then the focal event, then its effects, nearest first on each side. */
  order: number;
}

/** The walk as one list, in reading order: the farthest cause first, the farthest effect last. */
export function lineageRows(data: { focal: LineageEvent; upstream: LineageEvent[]; downstream: LineageEvent[] }): LineageRow[] {
  const up = [...data.upstream].sort((a, b) => b.depth - a.depth).map((e, i) => ({ ...e, side: 'upstream' as const, order: i }));
  const focal = { ...data.focal, side: 'focal' as const, order: up.length };
  const down = [...data.downstream].sort((a, b) => a.depth - b.depth).map((e, i) => ({ ...e, side: 'downstream' as const, order: up.length + 1 + i }));
  return [...up, focal, ...down];
}

/**
 * Nodes and cause → effect edges. `causedBy` names the cause by the toolset's own id, so an edge
 * is drawn only where the cause is in the walk too.
 */
export function lineageGraph(rows: readonly LineageRow[]): { nodes: GraphNode[]; edges: GraphEdge[] } {
  const byOwnId = new Map(rows.map((r) => [`${r.toolset}\u0000${r.id}`, r.eventId]));
  const nodes = rows.map((r) => ({ id: r.eventId, label: `${r.eventType} ${r.id}`, kind: r.side === 'focal' ? 'Focal' : 'Event' }));
  const edges: GraphEdge[] = [];
  for (const r of rows) {
    const cause = r.causedBy === null ? undefined : byOwnId.get(`${r.toolset}\u0000${r.causedBy}`);
    if (cause !== undefined && cause !== r.eventId) edges.push({ id: `${cause}->${r.eventId}`, source: cause, target: r.eventId });
  }
  return { nodes, edges };
}
