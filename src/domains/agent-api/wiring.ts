import type { FastifyBaseLogger } from 'fastify';
import type { AuditLog } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import { AGENT_API_SEARCH_FLAG } from '../../platform/faults/flags.ts';
import type { RuntimeFlags } from '../../platform/faults/index.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import { createRateLimiter, type RateLimiter } from '../../platform/rate-limit.ts';
import type { HoneypotDomain } from '../honeypot/index.ts';
import { callerTiers, createCallerCheck, type Limits } from './caller.ts';
import { agentApiEndpoints } from './endpoints.ts';
import { type CallRecorder, createCallRecorder } from './recorder.ts';
import { createSearchIndex, type SearchIndex } from './search-index/service.ts';
import { type AgentApiService, createAgentApiService } from './service.ts';

export interface AgentApiDomain {
  service: AgentApiService;
  searchIndex: SearchIndex;
  recorder: CallRecorder;
  limiter: RateLimiter;
  endpoints(all: () => readonly Endpoint[]): Endpoint[];
  /** Records the calls still buffered and lets go of Redis; after HTTP has drained. */
  close(): Promise<void>;
}

/**
 * Builds the public agent API once storage is migrated: loads the seed corpus on a database's
 * first start, makes sure the recording tenant exists, and opens the rate limiter (Redis when
 * REDIS_URL is set).
 */
export async function createAgentApiDomain(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Config;
  log: FastifyBaseLogger;
  honeypot: HoneypotDomain;
  /** Prefix of the rate limiter's Redis keys (tests isolate their runs). */
  rateKeyPrefix?: string;
  /** The runtime flags; `agent-api-search` switches the public search off (docs/chaos/README.md). */
  flags?: RuntimeFlags;
}): Promise<AgentApiDomain> {
  const { config, flags } = deps;
  const searchIndex = createSearchIndex({
    db: deps.db,
    log: deps.log,
    enabled: config.agentApi.searchIndex,
    // Another instance wrote topics: remembered answers may be out of date too.
    onExternalChange: () => service.forgetAnswers(),
  });
  const service = createAgentApiService({ db: deps.db, clock: deps.clock, audit: deps.audit, publicUrl: config.publicUrl, searchIndex });
  const seeded = await service.ensureSeedCorpus();
  if (seeded > 0) deps.log.info({ topics: seeded }, 'agent API seed corpus loaded');
  searchIndex.start();
  const tenant = config.agentApi.tenant;
  if (tenant !== null) {
    await deps.honeypot.tenants.ensureTenant({
      slug: tenant,
      name: 'Public agent API',
      notes: 'Calls to the public agent search API, recorded by Observatory itself (OBSERVATORY_AGENT_API_TENANT).',
    });
  }
  const { anonymousPerMinute, ipPerMinute, keyPerMinute } = config.agentApi;
  const limits: Limits = { anonymousPerMinute, ipPerMinute, keyPerMinute };
  const limiter = await createRateLimiter({
    redisUrl: config.redisUrl,
    ...(deps.rateKeyPrefix !== undefined ? { keyPrefix: deps.rateKeyPrefix } : {}),
    tiers: callerTiers(limits),
  });
  const recorder = createCallRecorder({
    tenantSlug: tenant,
    clock: deps.clock,
    log: deps.log,
    sink: { record: (slug, events) => deps.honeypot.recordEvents(slug, events) },
  });
  // Looked up through `service` at each call, so a test can watch the lookups (vi.spyOn).
  const checkCaller = createCallerCheck({ limiter, clock: deps.clock, resolveKey: (plaintext) => service.resolveKey(plaintext) });
  return {
    service,
    searchIndex,
    recorder,
    limiter,
    endpoints: (all) =>
      agentApiEndpoints({
        service,
        recorder,
        checkCaller,
        limits,
        baseUrl: config.publicUrl,
        endpoints: all,
        ...(flags ? { searchEnabled: () => flags.enabled(AGENT_API_SEARCH_FLAG) } : {}),
      }),
    async close() {
      await searchIndex.close();
      await recorder.close();
      await limiter.close();
    },
  };
}
