import type { FastifyBaseLogger } from 'fastify';
import type { AuditLog } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import { ServiceError } from '../../platform/errors.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import { builtinEngine, type ModelEngine } from '../../platform/llm/engine.ts';
import { linkOriginOf } from '../../platform/llm/links.ts';
import { createOpenAiEngine } from '../../platform/llm/openai-engine.ts';
import type { EmpireDomain } from '../empire/index.ts';
import { budgetEndpoints } from './budget/endpoints.ts';
import { type BudgetService, createBudgetService } from './budget/service.ts';
import { metricsEndpoints } from './metrics/endpoints.ts';
import { type AgentService, agentWatchJobs, createAgentService } from './metrics/service.ts';
import { postmortemEndpoints } from './postmortems/endpoints.ts';
import { createPostmortemService, type PostmortemService } from './postmortems/service.ts';
import { proposalEndpoints } from './proposals/endpoints.ts';
import { createProposalService, type ProposalService } from './proposals/service.ts';
import { runEndpoints } from './runs/endpoints.ts';
import { createRunService, type RunService } from './runs/service.ts';
import { savedViewEndpoints } from './views/endpoints.ts';
import { createSavedViewService } from './views/service.ts';

export interface TriageDomain {
  engine: ModelEngine;
  runs: RunService;
  proposals: ProposalService;
  agents: AgentService;
  budget: BudgetService;
  /** Incident postmortems; the analytics cohort incident-postmortem-7d reads when each was first written. */
  postmortems: PostmortemService;
  endpoints(): Endpoint[];
  jobs(): JobDefinition[];
}

/** What a scheduled run of a deferrable agent reports instead of failing the whole job. */
async function attempt(work: () => Promise<object>): Promise<object> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ServiceError && error.reason === 'budget-exhausted') return { deferred: error.human };
    if (error instanceof ServiceError) return { error: `${error.reason}: ${error.human}` };
    throw error;
  }
}

/**
 * The model budget (docs/triage/README.md, "Budget"), built before the rest of triage: the empire's
 * scheduled forecaster waits on it (the empire's `ModelBudget` port), and triage is built on the
 * empire.
 */
export function createTriageBudget(deps: { db: Db; clock: Clock; audit: AuditLog; config: Config }): BudgetService {
  return createBudgetService({ db: deps.db, clock: deps.clock, audit: deps.audit, llm: deps.config.llm, defaultBudgetUsdCents: deps.config.triage.defaultBudgetUsdCents });
}

/**
 * AI triage (docs/triage/README.md): the model layer's engine (live when OBSERVATORY_LLM_BASE_URL and
 * OBSERVATORY_LLM_MODEL are set, else built-in), the agents' runs, decisions, trust metrics and
 * rollback, the model budget (`createTriageBudget`) and postmortems. Builds on the empire's
 * incidents, alert rules, forecasts and lineage.
 */
export function createTriageDomain(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Config;
  log: FastifyBaseLogger;
  empire: EmpireDomain;
  budget: BudgetService;
  engine?: ModelEngine;
}): TriageDomain {
  const { db, clock, audit, config, log, empire, budget } = deps;
  const live = config.llm.live;
  const engine =
    deps.engine ??
    (live ? createOpenAiEngine({ baseUrl: live.baseUrl, model: live.model, apiKey: live.apiKey, timeoutMs: config.llm.timeoutMs, maxRetries: config.llm.maxRetries, log }) : builtinEngine);
  const agents = createAgentService({ db, clock, audit });
  const lineage = async (eventId: string, depth: number) => {
    try {
      return await empire.events.lineage(eventId, depth, null); // the agents read the fleet; who may see a run is decided by its input
    } catch (error) {
      if (error instanceof ServiceError && error.status === 404) return null;
      throw error;
    }
  };
  const linkOrigin = linkOriginOf(config.publicUrl);
  const runs = createRunService({ db, clock, engine, agents, budget, forecasts: async () => (await empire.forecaster.latest()).forecasts,
    hourlyCounts: empire.forecaster.hourlyCounts,
    lineage,
    linkOrigin,
    log,
  });
  const postmortems = createPostmortemService({ db, clock, audit, runs, agents, budget, incidents: empire.incidents, lineage, linkOrigin });
  const proposals = createProposalService({ db, clock, audit, config, incidents: empire.incidents, alerts: empire.alerts, postmortems });
  const views = createSavedViewService({ db });
  return {
    engine,
    runs,
    proposals,
    agents,
    budget,
    postmortems,
    endpoints: () => [
      ...proposalEndpoints({ proposals, runs }),
      ...runEndpoints({ runs }),
      ...postmortemEndpoints({ postmortems }),
      ...metricsEndpoints({ agents }),
      ...budgetEndpoints({ budget }),
      ...savedViewEndpoints({ views }),
    ],
    jobs: () => [
      {
        name: 'triage-pass',
        description:
          'Every 15 minutes (after the forecaster): the incident classifier over the last 15 minutes, then the investigation proposer over the same window unless the model budget defers it.',
        schedule: '2,17,32,47 * * * *',
        async run() {
          const triage = await runs.triage({ windowMinutes: 15, trigger: 'job' });
          const investigations = await attempt(() => runs.investigations({ windowMinutes: 15, trigger: 'job' }));
          return { triage, investigations };
        },
      },
      {
        name: 'triage-rules',
        description: 'Daily at 04:30 UTC: the rule proposer over the last 30 days of hourly counts and resolved incidents, unless the model budget defers it.',
        schedule: '30 4 * * *',
        run: async () => ({ rules: await attempt(() => runs.rules({ lookbackDays: 30, trigger: 'job' })) }),
      },
      {
        name: 'triage-prune',
        description: 'Daily at 03:40 UTC: deletes triage runs (their replay envelopes) older than 400 days; their proposals stay.',
        schedule: '40 3 * * *',
        run: async ({ now }) => ({ deleted: await runs.prune(now) }),
      },
      ...agentWatchJobs(agents),
    ],
  };
}
