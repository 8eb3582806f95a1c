import type { AuditLog } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import type { Outbound } from '../../platform/outbound/service.ts';
import { costBudgetEndpoints } from './budgets/endpoints.ts';
import { costBudgetJobs } from './budgets/jobs.ts';
import { type CostBudgetService, createCostBudgetService } from './budgets/service.ts';
import { costRecordEndpoints } from './records/endpoints.ts';
import { type CostRecordService, createCostRecordService } from './records/service.ts';

export interface CostDomain {
  records: CostRecordService;
  budgets: CostBudgetService;
  endpoints(): Endpoint[];
  jobs(): JobDefinition[];
}

/** The cost center (docs/cost/README.md, docs/cost/alerts.md): cost records and rollups, budgets, and the alerts their evaluator opens. */
export function createCostDomain(deps: { db: Db; clock: Clock; audit: AuditLog; outbound: Outbound; config: Config }): CostDomain {
  const records = createCostRecordService({ db: deps.db, clock: deps.clock, audit: deps.audit });
  const budgets = createCostBudgetService({
    db: deps.db,
    clock: deps.clock,
    audit: deps.audit,
    outbound: deps.outbound,
    config: deps.config,
    spend: records.spendMicroUsd,
  });
  return {
    records,
    budgets,
    endpoints: () => [...costRecordEndpoints(records), ...costBudgetEndpoints(budgets)],
    jobs: () => costBudgetJobs(budgets),
  };
}
