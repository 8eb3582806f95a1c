/**
 * What other domains may use of the knowledge graph (docs/graph/README.md): federation and the trust
 * snapshot read the materialiser's digest, lag and runs.
 */
export type { GraphMaterialiser } from './materialiser/service.ts';
export type { GraphDomain } from './wiring.ts';
export { isNodeKind, NODE_KINDS, type NodeKind } from './kinds.ts';
