import type { AuditLog } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import { provenanceEndpoints } from './endpoints.ts';
import { createProvenanceService, type ProvenanceService } from './service.ts';

export interface ProvenanceDomain {
  /** Keys, signed-only policies and attestations; the empire ingest admits and attests with it. */
  service: ProvenanceService;
  endpoints(): Endpoint[];
}

/** Builds provenance (spec B group 5): toolset keys, the signing policy and admission attestations. */
export function createProvenanceDomain(deps: { db: Db; clock: Clock; audit: AuditLog; config: Config }): ProvenanceDomain {
  const service = createProvenanceService({ db: deps.db, clock: deps.clock, audit: deps.audit, requireSignedGlobally: deps.config.empire.requireSignedEvents });
  return { service, endpoints: () => provenanceEndpoints(service) };
}
