import { Type } from '@sinclair/typebox';
import { freshAtRead, Freshness } from '../../../platform/freshness.ts';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, V1 } from '../../../platform/http/registry.ts';
import { CADENCE_MIN_DAILY, CADENCE_RATIO, CLUSTER_LIMIT, type DashboardService, SILENCE_MINUTES, TOP_N } from './service.ts';

/** The dashboard, clusters, fleet, heartbeat and db-health reads of spec B group 1 (docs/honeypot/dashboard.md). */

const generatedAt = '2026-11-23T08:00:00.000Z';
const Count = Type.Integer({ minimum: 0 });
const Pct = Type.Number({ minimum: 0, maximum: 100, description: 'A percentage with 2 decimals; 0 when the window has no events.' });

const WindowedQuery = Type.Object({
  tenant: Type.Optional(
    Type.String({ pattern: '^[a-z0-9-]{1,64}$', description: 'A tenant slug; omitted: every tenant together. Unknown: 404 not-found.' }),
  ),
  window: Type.Union([Type.Literal('24h'), Type.Literal('7d'), Type.Literal('30d')], {
    default: '24h',
    description: 'The current hour bucket and the 23, 167 or 719 whole hours before it (UTC).',
  }),
}, { examples: [{ tenant: 'edge-eu', window: '24h' }] });
/** Every event acknowledged before a read is applied to the rollups first: the answer is as of the read. */
const AT_READ = ' Every event acknowledged before the read is in the answer (`freshness.producer` `read`, `lagSec` 0).';
const exampleFresh = freshAtRead(new Date(generatedAt));
const TenantField = Nullable(Type.String({ description: 'The tenant slug asked for, or null for every tenant.' }));
const WindowField = Type.String({ description: '`24h`, `7d` or `30d`.' });

const exampleGptBot = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';
const exampleHours = Array.from({ length: 24 }, (_, i) => ({
  bucketIso: new Date(Date.parse('2026-11-22T09:00:00.000Z') + i * 3_600_000).toISOString(),
  count: [52, 48, 61, 40][i % 4]!,
}));

export function dashboardEndpoints(deps: { dashboard: DashboardService }): Endpoint[] {
  const { dashboard } = deps;
  return [
    defineEndpoint({
      id: 'getHoneypotDashboard',
      title: 'Honeypot dashboard',
      description: `KPIs and top lists of one tenant or of every tenant over a window of whole UTC hours (the current hour included), read from the rollups. totalEvents: events in the window; uniqueFingerprints: distinct fingerprints with an event in it; liarCount: events classed LIAR; liarRatePct: liarCount / totalEvents; knownVerifiedCount: events classed KNOWN_LLM_AGENT or VERIFIED_CRAWLER; attributionCoveragePct: share of events with a country or an AS number. Top lists hold at most ${TOP_N} entries, most events first (ties by value); topVerifiedVendors lists the user agents of KNOWN_LLM_AGENT and VERIFIED_CRAWLER events. eventsPerHour has one entry per hour of the window, oldest first, zeros included. See docs/honeypot/dashboard.md.` + AT_READ,
      method: 'GET',
      path: `${V1}/honeypot/dashboard`,
      auth: 'session-or-bearer',
      scope: 'read:dashboard',
      tag: 'honeypot',
      kind: 'read',
      uiPath: '/honeypot',
      query: WindowedQuery,
      response: {
        schemaId: 'svc-observatory-dashboard.v1',
        fields: {
          tenant: TenantField,
          window: WindowField,
          kpis: Type.Object({
            totalEvents: Count,
            uniqueFingerprints: Count,
            liarCount: Count,
            liarRatePct: Pct,
            knownVerifiedCount: Count,
            attributionCoveragePct: Pct,
          }),
          uaClassBreakdown: Type.Array(Type.Object({ uaClass: Type.String(), count: Count })),
          topPaths: Type.Array(Type.Object({ path: Type.String(), count: Count })),
          topCountries: Type.Array(Type.Object({ countryCode: Type.String(), count: Count })),
          topUas: Type.Array(Type.Object({ uaRaw: Type.String(), count: Count })),
          topVerifiedVendors: Type.Array(Type.Object({ uaRaw: Type.String(), count: Count })),
          eventsPerHour: Type.Array(Type.Object({ bucketIso: IsoDate, count: Count })),
          freshness: Freshness,
        },
      },
      example: {
        schema: 'svc-observatory-dashboard.v1',
        generatedAt,
        tenant: 'docs-mirror',
        window: '24h',
        kpis: { totalEvents: 1204, uniqueFingerprints: 87, liarCount: 96, liarRatePct: 7.97, knownVerifiedCount: 412, attributionCoveragePct: 98.5 },
        uaClassBreakdown: [
          { uaClass: 'BROWSER', count: 402 },
          { uaClass: 'KNOWN_LLM_AGENT', count: 388 },
          { uaClass: 'UNKNOWN_BOT', count: 294 },
          { uaClass: 'LIAR', count: 96 },
          { uaClass: 'VERIFIED_CRAWLER', count: 24 },
        ],
        topPaths: [
          { path: '/honeypot/topics/llm-pricing', count: 140 },
          { path: '/robots.txt', count: 97 },
        ],
        topCountries: [
          { countryCode: 'US', count: 610 },
          { countryCode: 'DE', count: 122 },
        ],
        topUas: [{ uaRaw: exampleGptBot, count: 301 }],
        topVerifiedVendors: [{ uaRaw: exampleGptBot, count: 301 }],
        eventsPerHour: exampleHours,
        freshness: exampleFresh,
      },
      handler: async ({ query }) => dashboard.dashboard({ tenant: query.tenant, window: query.window ?? '24h' }),
    }),
    defineEndpoint({
      id: 'listHoneypotClusters',
      title: 'Fingerprint clusters',
      description: `Fingerprints grouped by (ja4, uaClass, asn) over a window (as the dashboard's), most events first, at most ${CLUSTER_LIMIT}. eventCount: events of the cluster in the window; fingerprintCount: distinct fingerprints among them; firstSeen/lastSeen: earliest and latest event, over all history, of the fingerprints seen in the cluster (with that class, AS and JA4) during the window; sampleUa: the latest user agent of the cluster's busiest fingerprint, sampleFingerprintId that fingerprint (to open with investigate). ja4 and asn are null when unknown.` + AT_READ,
      method: 'GET',
      path: `${V1}/honeypot/clusters`,
      auth: 'session-or-bearer',
      scope: 'read:clusters',
      tag: 'honeypot',
      kind: 'read',
      uiPath: '/honeypot/clusters',
      query: WindowedQuery,
      response: {
        schemaId: 'svc-observatory-clusters.v1',
        fields: {
          tenant: TenantField,
          window: WindowField,
          clusters: Type.Array(
            Type.Object({
              ja4: Nullable(Type.String()),
              uaClass: Type.String(),
              asn: Nullable(Type.Integer()),
              eventCount: Count,
              fingerprintCount: Count,
              firstSeen: IsoDate,
              lastSeen: IsoDate,
              sampleUa: Type.String(),
              sampleFingerprintId: Type.String({ description: 'The busiest fingerprint of the cluster, whose UA sampleUa is.' }),
            }),
          ),
          freshness: Freshness,
        },
      },
      example: {
        schema: 'svc-observatory-clusters.v1',
        generatedAt,
        tenant: null,
        window: '7d',
        clusters: [
          {
            ja4: 't13d1516h2_8daaf6152771_02713d6af862',
            uaClass: 'LIAR',
            asn: 14061,
            eventCount: 913,
            fingerprintCount: 3,
            firstSeen: '2026-11-02T13:20:11.000Z',
            lastSeen: '2026-11-23T07:58:40.000Z',
            sampleUa: exampleGptBot,
            sampleFingerprintId: '5d41402abc4b2a76',
          },
        ],
        freshness: exampleFresh,
      },
      handler: async ({ query }) => dashboard.clusters({ tenant: query.tenant, window: query.window ?? '24h' }),
    }),
    defineEndpoint({
      id: 'getHoneypotFleet',
      title: 'Fleet overview',
      description: `Every tenant (disabled ones included) with its events in the dashboard windows 24h, 7d and 30d, the time of its latest event, and the cadence alarm: an enabled tenant whose 7 days before the 24h window averaged at least ${CADENCE_MIN_DAILY} events a day alarms when its 24h window holds fewer than ${Math.round(CADENCE_RATIO * 100)}% of that daily average. cadenceReason says which case applied (ok, below cadence, no baseline, disabled).` + AT_READ,
      method: 'GET',
      path: `${V1}/honeypot/fleet`,
      auth: 'session-or-bearer',
      scope: 'read:dashboard',
      tag: 'honeypot',
      kind: 'read',
      uiPath: '/honeypot/fleet',
      response: {
        schemaId: 'svc-observatory-fleet.v1',
        fields: {
          tenants: Type.Array(
            Type.Object({
              slug: Type.String(),
              name: Type.String(),
              disabled: Type.Boolean(),
              events24h: Count,
              events7d: Count,
              events30d: Count,
              lastSeenAt: Nullable(IsoDate),
              baselineDailyAvg: Type.Number({ description: 'Events a day over the 7 days before the 24h window.' }),
              cadenceAlarm: Type.Boolean(),
              cadenceReason: Type.String(),
            }),
          ),
          freshness: Freshness,
        },
      },
      example: {
        schema: 'svc-observatory-fleet.v1',
        generatedAt,
        tenants: [
          {
            slug: 'docs-mirror',
            name: 'Docs mirror honeypot',
            disabled: false,
            events24h: 61,
            events7d: 6790,
            events30d: 31002,
            lastSeenAt: '2026-11-23T02:14:09.000Z',
            baselineDailyAvg: 961.29,
            cadenceAlarm: true,
            cadenceReason: 'below cadence: 61 events in the last 24 h, under 25% of the 961.29 a day averaged over the 7 days before',
          },
        ],
        freshness: exampleFresh,
      },
      handler: async () => dashboard.fleet(),
    }),
    defineEndpoint({
      id: 'getHoneypotHeartbeat',
      title: 'Silent tenants',
      description: `Enabled tenants with no event in the last ${SILENCE_MINUTES} minutes whose baseline is not zero: the baseline is the events of the 14 × 24 whole hour buckets before the current hour, and baselineHourlyAvg is it divided by 336. Disabled tenants are never listed.`,
      method: 'GET',
      path: `${V1}/honeypot/ops/heartbeat`,
      auth: 'session-or-bearer',
      scope: 'read:dashboard',
      tag: 'ops',
      kind: 'read',
      uiPath: '/honeypot/ops',
      response: {
        schemaId: 'svc-observatory-ops-heartbeat.v1',
        fields: {
          silentTenants: Type.Array(
            Type.Object({
              slug: Type.String(),
              name: Type.String(),
              lastSeenAt: Nullable(IsoDate),
              lastHourCount: Count,
              baselineEvents14d: Count,
              baselineHourlyAvg: Type.Number({ minimum: 0 }),
              baselineFromIso: IsoDate,
            }),
          ),
        },
      },
      example: {
        schema: 'svc-observatory-ops-heartbeat.v1',
        generatedAt,
        silentTenants: [
          {
            slug: 'docs-mirror',
            name: 'Docs mirror honeypot',
            lastSeenAt: '2026-11-23T06:41:55.000Z',
            lastHourCount: 0,
            baselineEvents14d: 13440,
            baselineHourlyAvg: 40,
            baselineFromIso: '2026-11-09T08:00:00.000Z',
          },
        ],
      },
      handler: async () => dashboard.heartbeat(),
    }),
    defineEndpoint({
      id: 'getHoneypotDbHealth',
      title: 'Honeypot database health',
      description:
        'Row counts and timings of the honeypot store. honeypotEventCount and honeypotEvent24hCount are exact (sums of the hourly rollup, which counts every stored event); fingerprintCount and ingestSampleCount are exact below 100,000 rows and otherwise the planner estimate (pg_class.reltuples), and estimatedFields names those that are estimates. oldest/newestSampleIso bound the ingest samples. dashboardQueryMs is the time this call took to run the 24h all-tenant dashboard read.',
      method: 'GET',
      path: `${V1}/honeypot/ops/db-health`,
      auth: 'session-or-bearer',
      scope: 'read:dashboard',
      tag: 'ops',
      kind: 'read',
      uiPath: '/honeypot/ops',
      response: {
        schemaId: 'svc-observatory-ops-db-health.v1',
        fields: {
          honeypotEventCount: Count,
          fingerprintCount: Count,
          ingestSampleCount: Count,
          honeypotEvent24hCount: Count,
          oldestSampleIso: Nullable(IsoDate),
          newestSampleIso: Nullable(IsoDate),
          dashboardQueryMs: Type.Number({ minimum: 0 }),
          estimatedFields: Type.Array(Type.String()),
          rollupsAdvancedAt: Nullable(IsoDate),
        },
      },
      example: {
        schema: 'svc-observatory-ops-db-health.v1',
        generatedAt,
        honeypotEventCount: 1000512,
        fingerprintCount: 2210,
        ingestSampleCount: 152044,
        honeypotEvent24hCount: 33412,
        oldestSampleIso: '2026-10-24T08:00:02.114Z',
        newestSampleIso: '2026-11-23T07:59:59.870Z',
        dashboardQueryMs: 4.21,
        estimatedFields: ['ingestSampleCount'],
        rollupsAdvancedAt: '2026-11-23T08:00:00.512Z',
      },
      handler: async () => dashboard.dbHealth(),
    }),
  ];
}
