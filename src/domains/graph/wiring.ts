import type { FastifyBaseLogger } from 'fastify';
import type { AuditLog } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import { graphQueryEndpoints } from './endpoints.ts';
import { graphMaterialiserEndpoints } from './materialiser/endpoints.ts';
import { createGraphMaterialiser, type GraphMaterialiser, type GraphMaterialiserDeps } from './materialiser/service.ts';
import { createGraphQueryService, type GraphQueryService } from './query/service.ts';
import { createSavedQueryService, type SavedQueryService } from './saved/service.ts';

export interface GraphDomain {
  materialiser: GraphMaterialiser;
  queries: GraphQueryService;
  saved: SavedQueryService;
  endpoints(): Endpoint[];
  jobs(): JobDefinition[];
  close(): Promise<void>;
}

/** The knowledge graph (docs/graph/README.md): the materialiser, the query language and saved queries. */
export function createGraphDomain(deps: { db: Db; clock: Clock; audit: AuditLog; log: FastifyBaseLogger; vendors: GraphMaterialiserDeps['vendors']; sources: GraphMaterialiserDeps['sources'] }): GraphDomain {
  const materialiser = createGraphMaterialiser({ db: deps.db, clock: deps.clock, log: deps.log, vendors: deps.vendors, sources: deps.sources });
  const queries = createGraphQueryService({ db: deps.db });
  const saved = createSavedQueryService({ db: deps.db, clock: deps.clock, audit: deps.audit, validate: (text) => void queries.parse(text) });
  return {
    materialiser,
    queries,
    saved,
    endpoints: () => [...graphMaterialiserEndpoints(materialiser), ...graphQueryEndpoints({ queries, saved, freshness: (kinds) => materialiser.freshness(kinds) })],
    jobs: () => materialiser.jobs(),
    close: () => queries.close(),
  };
}
