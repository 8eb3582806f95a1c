/**
 * What other domains may use of the knowledge graph (docs/graph/README.md): federation and the trust
 * snapshot read the materialiser's digest, lag and runs; the empire's alert rules name node kinds;
 * the honeypot, the empire and provenance answer the materialiser's reads (`GraphSources`) with
 * the rows it draws the graph from.
 */
export type { GraphMaterialiser } from './materialiser/service.ts';
export type { GraphDomain } from './wiring.ts';
export { isNodeKind, NODE_KINDS, type NodeKind } from './kinds.ts';
export type { EmpireGraphSource, GraphSources, HoneypotGraphSource, ProvenanceGraphSource } from './materialiser/ports.ts';
export type { AttestationRow, EmpireEventRow, HoneypotEventRow, IncidentRow, KeyRow, TenantRow as GraphTenantRow } from './materialiser/sources.ts';
