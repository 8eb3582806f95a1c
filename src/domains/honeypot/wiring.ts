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
import { fingerprintOf, hashIp } from './enrichment/fingerprint.ts';
import { openGeoIp } from './enrichment/geoip.ts';
import { isValidIp } from './enrichment/ip.ts';
import { ingestJobs } from './ingest/jobs.ts';
import { getOrCreateSetting } from './ingest/repository.ts';
import { createIngestService, type IngestEvent, type IngestResult, type IngestService } from './ingest/service.ts';
import { createReadService } from './reads/service.ts';
import { createTenantService, type TenantService } from './tenants/service.ts';
import { classifyRequest } from './vendors/classify.ts';
import { applyStoredRanges, vendorJobs } from './vendors/refresh.ts';
import { createRegistryHolder, loadVendorRegistry, type RegistryHolder } from './vendors/registry.ts';

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
  const hashedIps = memoizeByText((ip) => hashIp(ipHashKey, ip));
  const tenants = createTenantService({ db, clock, audit });
  const ingest = createIngestService({
    db,
    clock,
    log: deps.log,
    classifier: { classify: (input) => classifyRequest(registry.current, input) },
    geo,
    fingerprints: { fingerprintOf, hashIp: (key, ip) => (key === ipHashKey ? hashedIps(ip) : hashIp(key, ip)), isValidIp },
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
    async close() {
      await ingest.close();
      await dashboard.close();
    },
    jobs: () => [...ingestJobs(ingest), ...vendorJobs({ db, registryRef: registry, config }), ...alertJobs(alerts), ...dashboardJobs(dashboard)],
  };
}
