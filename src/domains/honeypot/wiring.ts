import type { FastifyBaseLogger } from 'fastify';
import type { AuditLog } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import { derivedKey, randomToken } from '../../platform/crypto.ts';
import { memoizeByText } from '../../platform/memo.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import type { DomainMetrics } from '../../platform/metrics.ts';
import type { Outbound } from '../../platform/outbound/service.ts';
import { alertJobs, type AlertService, createAlertService } from './alerts/service.ts';
import { createDashboardService, type DashboardService, dashboardJobs } from './dashboard/service.ts';
import { honeypotEndpoints } from './endpoints.ts';
import { fingerprintOf, hashIp, ipHasher } from './enrichment/fingerprint.ts';
import { openGeoIp } from './enrichment/geoip.ts';
import { isValidIp } from './enrichment/ip.ts';
import { ingestJobs } from './ingest/jobs.ts';
import { getOrCreateSetting } from './ingest/repository.ts';
import { createIngestService, type IngestEvent, type IngestResult, type IngestService } from './ingest/service.ts';
import { createReadService } from './reads/service.ts';
import { createTenantService, type TenantService } from './tenants/service.ts';
import { createRejudge } from './ingest/rejudge.ts';
import { classifyRequest } from './vendors/classify.ts';
import { createFcrdnsLookup, type FcrdnsLookup } from './vendors/fcrdns-lookup.ts';
import { applyStoredRanges, vendorJobs } from './vendors/refresh.ts';
import { createRegistryHolder, loadVendorRegistry, type RegistryHolder } from './vendors/registry.ts';

/** Addresses waiting for a reverse DNS lookup at most; beyond, requests are judged without one (`skipped: busy`). */
const RDNS_MAX_QUEUED = 1_000;
/** Reverse DNS answers kept (about 300 bytes each). */
const RDNS_CACHE_SIZE = 10_000;
/** How long an answer is used: node's resolver does not give the PTR record's TTL, so an hour, as crawler addresses are stable. */
const RDNS_ANSWER_TTL_MS = 60 * 60_000;
/** How long a failed lookup is remembered before the address is tried again. */
const RDNS_FAILURE_TTL_MS = 5 * 60_000;

export interface HoneypotDomain {
  tenants: TenantService;
  ingest: IngestService;
  registry: RegistryHolder;
  alerts: AlertService;
  dashboard: DashboardService;
  endpoints(): Endpoint[];
  jobs(): JobDefinition[];
  /**
   * Stores events the service saw itself (the public agent API's calls) for a tenant, through the
   * same classify, enrich, store and tarpit path as signed ingest; null when the tenant is missing
   * or disabled.
   */
  recordEvents(tenantSlug: string, events: IngestEvent[]): Promise<IngestResult | null>;
  /**
   * A key for `purpose` (HKDF-SHA256, platform/crypto.ts) derived from the IP-hash key: the secret
   * every instance sharing the database already holds alike (OBSERVATORY_IP_HASH_KEY, else made
   * once and kept in honeypot_settings), so a derived key survives restarts and agrees across
   * instances. The IP-hash key itself never leaves this domain.
   */
  derivedKey(purpose: string): Buffer;
  /**
   * Resolves when no reverse DNS lookup is queued or running and every answer has been used to
   * judge its events again (tests; shutdown waits for it too).
   */
  reverseDnsSettled(): Promise<void>;
  /** The reverse DNS lookups' counters; null when lookups are turned off. */
  reverseDnsStats(): ReturnType<FcrdnsLookup['stats']> | null;
  /**
   * Lets ingest in flight commit, writes buffered samples and applies pending rollups; after HTTP
   * has drained, before storage closes.
   */
  close(): Promise<void>;
}

/**
 * Builds the honeypot domain once storage is migrated: the vendor registry (shipped or
 * OBSERVATORY_VENDORS_FILE, with ranges refreshed earlier overlaid), the offline GeoIP data, and
 * the IP-hash key every instance shares.
 */
export async function createHoneypotDomain(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Config;
  log: FastifyBaseLogger;
  /** The shared alert fan-out; alert rules enqueue their notifications on it. */
  outbound: Outbound;
  /** Counts stored events and opened tarpits; none when absent. */
  metrics?: DomainMetrics;
}): Promise<HoneypotDomain> {
  const { db, clock, audit, config } = deps;
  const registry = createRegistryHolder(loadVendorRegistry(config.honeypot.vendorsFile));
  await applyStoredRanges({ db, registryRef: registry });
  const geo = await openGeoIp();
  const ipHashKey = config.honeypot.ipHashKey ?? (await getOrCreateSetting(db, 'ip-hash-key', randomToken(32), clock.now()));

  // Senders repeat their addresses (a crawler, the agent API's callers): one HMAC per address, not per event.
  const hashedIps = memoizeByText(ipHasher(ipHashKey));
  const tenants = createTenantService({ db, clock, audit });
  const fingerprinter = { fingerprintOf, hashIp: (key: string, ip: string) => (key === ipHashKey ? hashedIps(ip) : hashIp(key, ip)), isValidIp };
  const rejudge = createRejudge({
    db,
    registry,
    fingerprints: fingerprinter,
    hashIp: (ip) => hashedIps(ip),
    onPending: () => dashboard.schedulePending(),
  });
  const rdnsConfig = config.honeypot.reverseDns;
  const fcrdns: FcrdnsLookup | null = rdnsConfig.enabled
    ? createFcrdnsLookup({
        servers: rdnsConfig.servers,
        timeoutMs: rdnsConfig.timeoutMs,
        concurrency: rdnsConfig.concurrency,
        maxQueued: RDNS_MAX_QUEUED,
        cacheSize: RDNS_CACHE_SIZE,
        answerTtlMs: RDNS_ANSWER_TTL_MS,
        failureTtlMs: RDNS_FAILURE_TTL_MS,
        domains: () => registry.current.vendors.flatMap((v) => v.reverseDns),
        now: () => clock.now().getTime(),
        onAnswer: (ip, fact) => rejudge.enqueue(ip, fact, deps.log),
      })
    : null;
  const reverseDns = fcrdns === null ? {} : { reverseDns: (ip: string) => fcrdns.known(ip) };
  const ingest = createIngestService({
    db,
    clock,
    log: deps.log,
    classifier: { classify: (input) => classifyRequest(registry.current, { ...input, ...reverseDns }) },
    geo,
    fingerprints: fingerprinter,
    tenantBySlug: (slug, fresh) => tenants.forIngest(slug, fresh),
    ipHashKey: () => ipHashKey,
    liarThreshold: config.honeypot.liarThreshold,
    tarpitTtlMinutes: config.honeypot.tarpitTtlMinutes,
    onPending: () => dashboard.schedulePending(),
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
  });
  const dashboard = createDashboardService({
    db,
    clock,
    tenants,
    log: deps.log,
    flushSamples: ingest.flushSamples,
    applyDelayMs: config.honeypot.rollupApplyDelayMs,
  });
  const alerts = createAlertService({ db, clock, audit, outbound: deps.outbound, config, log: deps.log, tenants });
  // Creates the rollup state (and builds the rollups from stored events) on the first start.
  await dashboard.ensureRollups();
  return {
    tenants,
    ingest,
    registry,
    alerts,
    dashboard,
    endpoints: () =>
      honeypotEndpoints({
        tenants,
        ingest,
        alerts,
        reads: createReadService({ db, clock, tenants, registry, flushSamples: ingest.flushSamples, applyPending: dashboard.applyPending }),
        dashboard,
        clock,
      }),
    async recordEvents(tenantSlug, events) {
      const tenant = await tenants.forIngest(tenantSlug);
      if (!tenant || tenant.disabledAt !== null) return null;
      // A forwarded address that is not an IP (a proxy's garbage) must not sink the whole batch.
      const valid = events.filter((event) => isValidIp(event.ip));
      if (valid.length === 0) return { accepted: 0, duplicates: 0, events: [] };
      return ingest.ingest(tenant, { events: valid });
    },
    derivedKey: (purpose) => derivedKey(ipHashKey, purpose),
    async reverseDnsSettled() {
      await fcrdns?.idle();
      await rejudge.settled();
    },
    reverseDnsStats: () => fcrdns?.stats() ?? null,
    async close() {
      // Lookups still out are dropped: their events stay as judged (pending) and are judged again
      // when their address is next seen and answered.
      fcrdns?.close();
      await rejudge.settled();
      await ingest.close();
      await dashboard.close();
    },
    jobs: () => [...ingestJobs(ingest), ...vendorJobs({ db, registryRef: registry, config }), ...alertJobs(alerts), ...dashboardJobs(dashboard)],
  };
}
