import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import { type EmpireDomain, empireAnalyticsFacts } from '../empire/index.ts';
import type { IdentityService } from '../identity/index.ts';
import { triageAnalyticsFacts, type TriageDomain } from '../triage/index.ts';
import { analyticsCohortEndpoints } from './cohorts/endpoints.ts';
import { createCohortService } from './cohorts/service.ts';
import { analyticsWarehouseEndpoints } from './warehouse/endpoints.ts';
import { createAnalyticsQueryService } from './warehouse/query.ts';
import { createRollupService, type RollupService, rollupJobs } from './warehouse/rollup.ts';
import { factSources } from './warehouse/sources.ts';
import { costAnalyticsFacts } from '../cost/index.ts';
import { honeypotAnalyticsFacts } from '../honeypot/index.ts';

export interface AnalyticsDomain {
  rollup: RollupService;
  endpoints(): Endpoint[];
  jobs(): JobDefinition[];
}

/**
 * The analytics warehouse (docs/analytics/README.md): daily rollups of the other domains' facts, kept by
 * the `analytics-rollup` job, the metric catalogue and query, and the cohorts.
 */
export function createAnalyticsDomain(deps: {
  db: Db;
  clock: Clock;
  config: Config;
  identity: IdentityService;
  empire: EmpireDomain;
  triage: TriageDomain;
}): AnalyticsDomain {
  const sources = factSources({ region: deps.config.region, honeypot: honeypotAnalyticsFacts, empire: empireAnalyticsFacts, triage: triageAnalyticsFacts, cost: costAnalyticsFacts });
  const rollup = createRollupService({ db: deps.db, sources });
  const query = createAnalyticsQueryService({ db: deps.db });
  const cohorts = createCohortService({ clock: deps.clock, identity: deps.identity, empire: deps.empire, triage: deps.triage });
  return {
    rollup,
    endpoints: () => [...analyticsWarehouseEndpoints(query), ...analyticsCohortEndpoints(cohorts)],
    jobs: () => rollupJobs(rollup),
  };
}
