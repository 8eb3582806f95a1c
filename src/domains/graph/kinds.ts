import { toolsetReach } from '../../platform/http/auth.ts';
import type { Principal, Scope } from '../../platform/http/registry.ts';

/**
 * The kinds of node and edge the knowledge graph holds (docs/graph/README.md, "Kinds"), and who may see
 * them. This is the contract between the materialiser (which builds them) and the query language
 * (which reads them): a label or relationship type in a query must be one of these.
 */

export const NODE_KINDS = ['Tenant', 'Fingerprint', 'Cluster', 'Vendor', 'Toolset', 'EmpireEvent', 'Incident', 'Key', 'Attestation'] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

/**
 * Each edge kind with the node kinds it joins (from → to). Direction reads as a sentence:
 * (Fingerprint)-[:SEEN_ON]->(Tenant) "fingerprint seen on tenant".
 */
export const EDGE_KINDS = {
  SEEN_ON: { from: 'Fingerprint', to: 'Tenant' },
  IN_CLUSTER: { from: 'Fingerprint', to: 'Cluster' },
  CLAIMS: { from: 'Fingerprint', to: 'Vendor' },
  EMITTED_BY: { from: 'EmpireEvent', to: 'Toolset' },
  CAUSED_BY: { from: 'EmpireEvent', to: 'EmpireEvent' },
  FROM_TENANT: { from: 'EmpireEvent', to: 'Tenant' },
  ABOUT: { from: 'EmpireEvent', to: 'Fingerprint' },
  SIGNED_BY: { from: 'EmpireEvent', to: 'Key' },
  ATTESTS: { from: 'Attestation', to: 'EmpireEvent' },
  BY_KEY: { from: 'Attestation', to: 'Key' },
  BELONGS_TO: { from: 'Key', to: 'Toolset' },
  CONCERNS: { from: 'Incident', to: 'EmpireEvent' },
  ON_TOOLSET: { from: 'Incident', to: 'Toolset' },
} as const satisfies Record<string, { from: NodeKind; to: NodeKind }>;
export type EdgeKind = keyof typeof EDGE_KINDS;
export const EDGE_KIND_NAMES = Object.keys(EDGE_KINDS) as EdgeKind[];

export const isNodeKind = (text: string): text is NodeKind => (NODE_KINDS as readonly string[]).includes(text);
export const isEdgeKind = (text: string): text is EdgeKind => Object.hasOwn(EDGE_KINDS, text);

/**
 * The scope a caller needs, besides `read:empire` (which the graph endpoints require), to see a
 * node kind: the same scope that guards the honeypot reads the node comes from. Kinds absent here
 * need only `read:empire`.
 */
export const KIND_SCOPE: Partial<Record<NodeKind, Scope>> = {
  Tenant: 'read:tenants',
  Fingerprint: 'read:clusters',
  Cluster: 'read:clusters',
};

/**
 * What a caller may see of the graph: node kinds by scope, and, for a token bound to toolsets,
 * only nodes that belong to none or to one of its toolsets. An edge is visible when both of its
 * nodes are.
 */
export interface Visibility {
  kinds: readonly NodeKind[];
  /** null: every toolset; otherwise a node whose `toolset` is set must be one of these. */
  toolsets: readonly string[] | null;
}

export function visibilityOf(principal: Pick<Principal, 'scopes' | 'toolsets'>): Visibility {
  return {
    kinds: NODE_KINDS.filter((kind) => {
      const scope = KIND_SCOPE[kind];
      return scope === undefined || principal.scopes.has(scope);
    }),
    toolsets: toolsetReach(principal),
  };
}

/** Every node and edge kind visible to a caller holding every scope and no toolset binding. */
export const FULL_VISIBILITY: Visibility = { kinds: NODE_KINDS, toolsets: null };
