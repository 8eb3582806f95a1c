import { useEffect, useRef, useState } from 'react';
import type cytoscape from 'cytoscape';

export interface GraphNode {
  id: string;
  label: string;
  kind?: string;
}
export interface GraphEdge {
  id?: string;
  source: string;
  target: string;
  label?: string;
}

const KIND_COLOURS: Record<string, string> = {
  Event: '#2563eb',
  Fingerprint: '#7c3aed',
  Tenant: '#16a34a',
  Vendor: '#d97706',
  Incident: '#dc2626',
  Toolset: '#0891b2',
  EmpireEvent: '#1e40af',
  Key: '#a16207',
  Attestation: '#be185d',
  Cluster: '#65a30d',
};

/**
 * Nodes and edges drawn with Cytoscape.js, loaded only when a graph is on screen so it stays out
 * of the first load's script.
 */
export function GraphView({ nodes, edges, label, height = 360 }: { nodes: readonly GraphNode[]; edges: readonly GraphEdge[]; label: string; height?: number }) {
  const host = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState<string | null>(null);

  useEffect(() => {
    let cy: cytoscape.Core | null = null;
    let cancelled = false;
    void import('cytoscape')
      .then(({ default: cytoscapeLib }) => {
        if (cancelled || !host.current) return;
        const known = new Set(nodes.map((n) => n.id));
        cy = cytoscapeLib({
          container: host.current,
          elements: [
            ...nodes.map((n) => ({ data: { id: n.id, label: n.label, kind: n.kind ?? '' } })),
            ...edges
              .filter((e) => known.has(e.source) && known.has(e.target))
              .map((e, i) => ({ data: { id: e.id ?? `e${i}`, source: e.source, target: e.target, label: e.label ?? '' } })),
          ],
          style: [
            {
              selector: 'node',
              style: {
                label: 'data(label)',
                'font-size': 10,
                'background-color': (ele: cytoscape.NodeSingular) => KIND_COLOURS[ele.data('kind') as string] ?? '#4b5563',
                'text-wrap': 'ellipsis',
                'text-max-width': '120px',
              },
            },
            { selector: 'edge', style: { label: 'data(label)', 'font-size': 8, 'curve-style': 'bezier', 'target-arrow-shape': 'triangle', width: 1.5 } },
          ],
          layout: { name: nodes.length > 40 ? 'grid' : 'cose', animate: false },
        });
      })
      .catch((cause: unknown) => setFailed(String(cause)));
    return () => {
      cancelled = true;
      cy?.destroy();
    };
  }, [nodes, edges]);

  if (nodes.length === 0) return <p className="empty">No nodes to draw.</p>;
  if (failed) return <p className="error-note">The graph could not be drawn: {failed}</p>;
  return <div ref={host} className="graph" role="img" aria-label={`${label}: ${nodes.length} nodes, ${edges.length} edges`} style={{ height }} />;
}
