/**
 * What other domains may use of provenance (docs/empire/README.md): the service the empire ingest admits
 * and attests with, the pure admission rule that ingest and replay apply, the attestation and key reads the
 * knowledge graph draws on (the toolset-name rule is platform's, platform/toolset-name.ts).
 */
export { candidateKeys, type Decision, decideAdmission, type RejectionReason, type VerifyingKey } from './admission.ts';
export type { AttestationRow } from './repository.ts';
export { provenanceGraphFacts } from './graph/service.ts';
export type { ProvenanceService } from './service.ts';
export type { ProvenanceDomain } from './wiring.ts';
