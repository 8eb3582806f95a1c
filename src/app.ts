import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { type AgentApiDomain, createAgentApiDomain } from './domains/agent-api/wiring.ts';
import { createAuditChainDomain } from './domains/audit-chain/wiring.ts';
import { type ChaosDomain, createChaosDomain } from './domains/chaos/wiring.ts';
import { createBackupsDomain } from './domains/backups/wiring.ts';
import { createComplianceDomain } from './domains/compliance/wiring.ts';
import { createAnalyticsDomain } from './domains/analytics/wiring.ts';
import { createCostDomain } from './domains/cost/wiring.ts';
import { createEmpireDomain, type EmpireDomain } from './domains/empire/wiring.ts';
import { createFederationDomain, type FederationDomain } from './domains/federation/wiring.ts';
import { empireGraphFacts } from './domains/empire/index.ts';
import { createGraphDomain, type GraphDomain } from './domains/graph/wiring.ts';
import { honeypotGraphFacts } from './domains/honeypot/index.ts';
import { createHoneypotDomain, type HoneypotDomain } from './domains/honeypot/wiring.ts';
import { provenanceGraphFacts } from './domains/provenance/index.ts';
import { createProvenanceDomain, type ProvenanceDomain } from './domains/provenance/wiring.ts';
import { createTriageBudget, createTriageDomain, type TriageDomain } from './domains/triage/wiring.ts';
import { createTrustDomain, type TrustDomain } from './domains/trust/wiring.ts';
import { createIdentityDomain } from './domains/identity/wiring.ts';
import type { IdentityService } from './domains/identity/index.ts';
import { metaEndpoints } from './domains/meta/endpoints.ts';
import { opsEndpoints } from './domains/ops/endpoints.ts';
import { createOpsService } from './domains/ops/service.ts';
import { type AuditLog, createAuditLog } from './platform/audit/service.ts';
import { type Clock, systemClock } from './platform/clock.ts';
import type { Config } from './platform/config.ts';
import { type Database, databaseOptions, openDatabase } from './platform/db/client.ts';
import { createRuntimeFlags } from './platform/faults/flags.ts';
import type { BridgeTokens, LatencyFaults, RuntimeFlags } from './platform/faults/index.ts';
import { createLatencyFaults } from './platform/faults/latency.ts';
import { createBridgeTokens } from './platform/faults/bridge-tokens.ts';
import type { Endpoint } from './platform/http/registry.ts';
import { type AuthFailureLimiter, createAuthFailureLimiter } from './platform/http/auth-failures.ts';
import { buildServer } from './platform/http/server.ts';
import { createScheduler, type Scheduler } from './platform/jobs/scheduler.ts';
import { createLogger } from './platform/logger.ts';
import { createMetrics } from './platform/metrics.ts';
import { outboundEndpoints } from './platform/outbound/endpoints.ts';
import { createFileStores } from './platform/storage/files.ts';
import { createOutbound, type Outbound, outboundJobs } from './platform/outbound/service.ts';

/**
 * The composition root: the one place that knows every domain. It opens storage, migrates, wires
 * each domain's service, collects every domain's endpoints into the registry and jobs into the
 * scheduler, and builds the HTTP server from them.
 */
export interface App {
  server: FastifyInstance;
  database: Database;
  scheduler: Scheduler;
  identity: IdentityService;
  audit: AuditLog;
  outbound: Outbound;
  honeypot: HoneypotDomain;
  agentApi: AgentApiDomain;
  empire: EmpireDomain;
  /** Toolset keys, signing policies and attestations (docs/empire/README.md); the empire ingest admits with it. */
  provenance: ProvenanceDomain;
  graph: GraphDomain;
  triage: TriageDomain;
  /** Regions, digests and the bridge fan-out (docs/federation/README.md); `federation.reads` is what other domains use. */
  federation: FederationDomain;
  /** The drift inbox and the trust snapshot (docs/federation/README.md, docs/trust/README.md). */
  trust: TrustDomain;
  /** Chaos experiments, the freeze switch and the recovery record (docs/chaos/README.md). */
  chaos: ChaosDomain;
  /** The per-address limit on failed authentication; null when turned off. */
  authFailures: AuthFailureLimiter | null;
  /** The fault levers chaos experiments pull (platform/faults, docs/chaos/README.md); held by this process only. */
  faults: { latency: LatencyFaults; flags: RuntimeFlags; bridgeTokens: BridgeTokens };
  endpoints: readonly Endpoint[];
  /** Stops the scheduler, drains HTTP, closes storage (unless the database was lent by the caller). */
  close(): Promise<void>;
}

export interface AppOptions {
  config: Config;
  clock?: Clock;
  /** A database opened by the caller (tests, several instances on one PGlite); it stays open on close. */
  database?: Database;
  logger?: FastifyBaseLogger;
  /** Told the plaintext of the first-start token when one is created (spec D1). */
  onFirstToken?: (token: string) => void;
  /**
   * Whether an open chaos run is stepped every second (its window ended, its recovery probed);
   * true unless a test steps the runner by hand with a manual clock.
   */
  chaosAutoStep?: boolean;
  /** Prefix of the rate limiter's Redis keys, so test runs sharing one Redis do not count together. */
  rateKeyPrefix?: string;
}

export async function createApp(options: AppOptions): Promise<App> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const ownsDatabase = options.database === undefined;
  const database =
    options.database ??
    (await openDatabase(databaseOptions(config)));

  try {
    const audit = createAuditLog({ clock });
    const identityDomain = createIdentityDomain({ db: database.db, clock, audit, config });
    const identity = identityDomain.tokens;

    // Sessions start writable. A new process's are; but an embedded database shared by two app
    // instances in one process (tests) keeps the read-only default a stopped instance's chaos run set.
    await database.setReadOnly(false);
    await database.migrate(async () => {
      const { firstToken } = await identity.bootstrap(config.adminToken);
      if (firstToken !== null) options.onFirstToken?.(firstToken);
    });

    const metrics = createMetrics(() => database.poolStats());
    // The bridge tokens every bridge call is checked against and sends; a chaos rotation rehearsal switches what is sent.
    const bridgeTokens = createBridgeTokens(config.bridgeToken, config.bridgeTokenNext);
    const logger: FastifyBaseLogger = options.logger ?? createLogger(config.logLevel, { format: config.logFormat });
    const outbound = createOutbound({ db: database.db, clock, config, log: logger, metrics: metrics.domains });
    // The fault levers (docs/chaos/README.md). Latency targets are checked against the registry's
    // endpoint ids, which exist only once every domain is built: read through `endpoints` below.
    let endpoints: Endpoint[] = [];
    const latency = createLatencyFaults(() => endpoints.map((e) => e.id));
    const flags = createRuntimeFlags();
    // In-process probe requests of chaos runs go to the server built last.
    let server: FastifyInstance | null = null;
    const honeypot = await createHoneypotDomain({ db: database.db, clock, audit, config, log: logger, outbound, metrics: metrics.domains });
    const agentApi = await createAgentApiDomain({
      db: database.db,
      clock,
      audit,
      config,
      log: logger,
      honeypot,
      flags,
      ...(options.rateKeyPrefix !== undefined ? { rateKeyPrefix: options.rateKeyPrefix } : {}),
    });
    const graph = createGraphDomain({
      db: database.db,
      clock,
      audit,
      log: logger,
      vendors: () => honeypot.registry.current.vendors,
      sources: { honeypot: honeypotGraphFacts, empire: empireGraphFacts, provenance: provenanceGraphFacts },
    });
    const provenance = createProvenanceDomain({ db: database.db, clock, audit, config });
    // The forecaster's scheduled runs wait while the triage budget is spent (spec A "Triage budget"),
    // and triage is built on the empire: the budget is built first and handed to both.
    const modelBudget = createTriageBudget({ db: database.db, clock, audit, config });
    // GET overview?federated=1 answers the federation's merged overview; federation is built on the empire, hence the late binding.
    let federation: FederationDomain | null = null;
    const empire = createEmpireDomain({
      db: database.db,
      clock,
      audit,
      config,
      log: logger,
      outbound,
      provenance: provenance.service,
      metrics: metrics.domains,
      graphLag: graph.materialiser.lagSec,
      modelBudget,
      federatedOverview: (caller) => federation!.overview.federated(caller),
    });
    const triage = createTriageDomain({ db: database.db, clock, audit, config, log: logger, empire, budget: modelBudget });
    const cost = createCostDomain({ db: database.db, clock, audit, outbound, config });
    const analytics = createAnalyticsDomain({ db: database.db, clock, config, identity, empire, triage });
    // One file store (platform/storage/files.ts) for backup snapshots and compliance evidence bundles.
    const files = createFileStores(config.backups, logger);
    const backups = createBackupsDomain({ database, clock, audit, config, log: logger, files, bridgeTokens });
    // Compliance and trust read each other (the no-open-critical-drift control; the compliance-fail
    // detector), and both read federation (built after compliance, below): late binding, as for the federated overview above.
    // Compliance reads chaos's recovery record too (chaos-recovery-within-slo); chaos is built after trust.
    let trust: TrustDomain | null = null;
    let chaos: ChaosDomain | null = null;
    const compliance = createComplianceDomain({
      db: database.db,
      clock,
      audit,
      config,
      files,
      evidenceLinkKey: honeypot.derivedKey('compliance-evidence-links'),
      inputs: {
        identity,
        backups,
        costBudgets: cost.budgets,
        provenance: provenance.service,
        triageProposals: triage.proposals,
        trust: () => trust?.drift ?? null,
        federation: () => federation?.reads ?? null,
        chaos: () => chaos?.reads ?? null,
      },
      triage,
    });
    // After graph and compliance: the local digest tuple reads the graph's latest digest and the controls' outcomes in force.
    federation = createFederationDomain({
      db: database.db,
      clock,
      audit,
      config,
      log: logger,
      bridgeTokens,
      graph: graph.materialiser,
      compliance: compliance.reads,
      dashboards: empire.dashboards,
      figures: {
        ingest24h: () => empire.slo.overall('24h'),
        rollupLagsSec: async () => [await honeypot.dashboard.rollupLagSec(), await analytics.rollup.lagSec(clock.now())],
      },
    });
    trust = createTrustDomain({ db: database.db, clock, audit, inputs: { graph, empire, provenance: provenance.service, compliance, backups, analytics, federation: () => federation?.reads ?? null } });
    chaos = createChaosDomain({
      db: database.db,
      clock,
      audit,
      config,
      // Read at each registration: the registry and the scheduler are assembled below.
      targets: {
        endpointIds: () => endpoints.map((e) => e.id),
        jobs: () => scheduler.jobs().map((j) => ({ name: j.name, schedule: j.schedule })),
        flagNames: () => flags.definitions().map((d) => d.name),
      },
      log: logger,
      runs: {
        autoStep: options.chaosAutoStep ?? true,
        faults: { latency, flags, bridgeTokens },
        database,
        // Probes go through the whole HTTP stack from a documentation address (RFC 5737), so they
        // count against no real caller's rate limit or failed-authentication limit.
        request: async (url) => {
          const began = performance.now();
          const res = await server!.inject({ method: 'GET', url, remoteAddress: '192.0.2.77' });
          return { status: res.statusCode, ms: performance.now() - began };
        },
        endpoints: () => endpoints,
        askPeers: async () => {
          const reads = federation?.reads;
          if (!reads) return null;
          const fan = await reads.fanOutDigest();
          return { answered: fan.participating.filter((region) => region !== reads.currentRegion), failed: fan.failed };
        },
        unresolvedCriticalDrift: async () => {
          const drift = await trust?.drift.criticalUnresolved(1);
          return drift === undefined ? null : drift.open + drift.acknowledged;
        },
      },
    });
    // The fleet gauges of /metrics: facts of the shared database, read at scrape time (platform/metrics.ts).
    metrics.useFleetReadings(async () => ({
      activeTarpits: await honeypot.ingest.countActiveTarpits(),
      pendingDeliveries: await outbound.countPending(),
      graphLagSec: await graph.materialiser.lagByKind(),
      rollupLagSec: new Map([
        ['honeypot-dashboard', await honeypot.dashboard.rollupLagSec()],
        ['analytics', await analytics.rollup.lagSec(clock.now())],
      ]),
    }));
    const scheduler = createScheduler({
      db: database.db,
      clock,
      log: logger,
      metrics,
      // Asked before each scheduled run whether a chaos run skips it (the cron-skip-one kind).
      beforeScheduledRun: (job, fireTime) => chaos!.runs.runner.beforeScheduledRun(job, fireTime),
      // A tick runs due jobs in this order: outbound-dispatch comes after every job that enqueues
      // notifications (alert-evaluate, empire-alert-evaluate, cost-budget-evaluate), so a firing
      // is sent in the tick that raised it rather than a minute later.
      jobs: [...identityDomain.jobs(), ...honeypot.jobs(), ...empire.jobs(), ...triage.jobs(), ...cost.jobs(), ...analytics.jobs(), ...graph.jobs(), ...backups.jobs(), ...compliance.jobs(), ...trust.jobs(), ...chaos.jobs(), ...outboundJobs(outbound, flags)],
    });
    const ops = createOpsService({ db: database.db, clock, audit, scheduler, config });
    const auditChain = createAuditChainDomain({ db: database.db, clock, audit, log: logger });
    endpoints = [
      ...metaEndpoints({ endpoints: () => endpoints, baseUrl: config.publicUrl, database, metrics, clock }),
      ...identityDomain.endpoints(),
      ...opsEndpoints(ops),
      ...outboundEndpoints(outbound, audit),
      ...honeypot.endpoints(),
      ...agentApi.endpoints(() => endpoints),
      ...empire.endpoints(),
      ...provenance.endpoints(),
      ...triage.endpoints(),
      ...cost.endpoints(),
      ...analytics.endpoints(),
      ...graph.endpoints(),
      ...backups.endpoints(),
      ...auditChain.endpoints(),
      ...compliance.endpoints(),
      ...federation.endpoints(),
      ...trust.endpoints(),
      ...chaos.endpoints(),
    ];
    const authFailures =
      config.authFailuresPerMinute > 0
        ? await createAuthFailureLimiter({
            perMinute: config.authFailuresPerMinute,
            redisUrl: config.redisUrl,
            ...(options.rateKeyPrefix !== undefined ? { keyPrefix: options.rateKeyPrefix } : {}),
          })
        : null;
    const app = buildServer({
      endpoints,
      credentials: identity.credentials,
      clock,
      metrics,
      metricsToken: config.metricsToken,
      bridgeTokens,
      logger,
      trustProxy: config.trustProxy,
      authFailures,
      limits: config.requestLimits,
      latency,
    });
    await app.ready();
    server = app;
    // Nothing a stopped process injected outlives it; runs it left open are closed once they lapse.
    await chaos.recoverAtStart();

    return {
      server: app,
      database,
      scheduler,
      identity,
      audit,
      outbound,
      honeypot,
      agentApi,
      empire,
      provenance,
      graph,
      triage,
      federation,
      trust,
      chaos,
      authFailures,
      faults: { latency, flags, bridgeTokens },
      endpoints,
      async close() {
        await scheduler.stop();
        await chaos!.close();
        await app.close();
        await agentApi.close();
        await authFailures?.close();
        await empire.close();
        await auditChain.close();
        await honeypot.close();
        await graph.close();
        if (ownsDatabase) await database.close();
      },
    };
  } catch (error) {
    if (ownsDatabase) await database.close().catch(() => {});
    throw error;
  }
}
