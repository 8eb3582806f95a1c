import { Type } from '@sinclair/typebox';
import { forbidden } from '../../../platform/errors.ts';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { TOOLSET_PATTERN } from '../../../platform/toolset-name.ts';
import { BREAKDOWN_LIMIT, DASHBOARD_WINDOWS, type DashboardService, type OverviewRow } from './dashboard.ts';
import { REPLAY_LIST_DEFAULT, REPLAY_LIST_MAX, REPLAYED_FIELDS, type ReplayService } from './replay.ts';
import { EMPIRE_SLO_WINDOWS, SLO_BADGE_THRESHOLDS, type SloService } from './slo.ts';

/** The empire's read views (spec B group 2): dashboard, overview, ingest SLO and replay. */

const generatedAt = '2026-11-24T08:00:00.000Z';
const TAG = 'empire';
const Count = Type.Integer({ minimum: 0 });
const ToolsetParams = Type.Object(
  { toolset: Type.String({ pattern: TOOLSET_PATTERN, description: '3 to 128 characters: a letter, then letters, digits or -.' }) },
  { examples: [{ toolset: 'crawler-lab' }] },
);
const windowKeys = <T extends object>(o: T) => Object.keys(o) as (keyof T & string)[];

const Kpi = Type.Object({
  id: Type.String(),
  label: Type.String(),
  precision: Type.Integer({ minimum: 0, description: 'Decimal places to show.' }),
  unit: Nullable(Type.String()),
  value: Nullable(Type.Number({ description: 'null when it cannot be computed (a share of no events).' })),
});

const Envelope = Type.Object({
  schemaVersion: Type.Integer(),
  receivedAt: IsoDate,
  sourceTenant: Nullable(Type.String()),
  bodyBytes: Count,
  eventType: Type.String(),
  causedBy: Nullable(Type.String()),
});
const exampleEnvelope = {
  schemaVersion: 1,
  receivedAt: '2026-11-24T07:59:58.120Z',
  sourceTenant: 'docs-mirror',
  bodyBytes: 212,
  eventType: 'crawl.page',
  causedBy: 'evt-000120',
};

const SloRow = Type.Object({
  toolset: Type.String(),
  badge: StringEnum(['green', 'yellow', 'red', 'unknown'] as const),
  totalSamples: Count,
  okCount: Count,
  okRatePct: Nullable(Type.Number()),
  outcomeBreakdown: Type.Array(Type.Object({ outcome: Type.String(), count: Count })),
  p50Ms: Nullable(Type.Number()),
  p95Ms: Nullable(Type.Number()),
  p99Ms: Nullable(Type.Number()),
});

const Bound = Type.Object({ okRatePct: Type.Number(), p95Ms: Type.Number() });

/** One toolset's overview row (spec B group 2). */
export const OverviewRowSchema = Type.Object({
  toolset: Type.String(),
  blurb: Type.String(),
  events24h: Count,
  events7d: Count,
  lastEventAt: Nullable(IsoDate),
  sparkline24h: Type.Array(Count, { minItems: 24, maxItems: 24 }),
});

/** The federation's merged overview (docs/federation/README.md, "Federated overview"), injected late: federation is built on the empire. */
export type FederatedOverviewProvider = (caller: Principal | null) => Promise<{
  windowEndIso: string;
  participatingRegions: string[];
  failedRegions: { region: string; reason: string }[];
  toolsets: (OverviewRow & { perRegion: Record<string, number> })[];
}>;

/** The federated fields of the overview and of `overview/federated`. */
export const FederatedOverviewFields = {
  participatingRegions: Type.Array(Type.String(), { description: 'The regions whose overview is merged: this deployment first, then the peers that answered, by key.' }),
  failedRegions: Type.Array(
    Type.Object({ region: Type.String(), reason: Type.String({ description: 'A fixed reason word (docs/federation/README.md, "Bridge"); the region\'s own words go to the log only.' }) }),
    { description: 'Active regions that could not be asked or did not answer; reported, never thrown.' },
  ),
};
export const PerRegion = Type.Record(Type.String(), Count, { description: 'Region key → the toolset\'s events in the last 24 hours there (regions that do not list the toolset are left out).' });

export function empireInsightEndpoints(deps: { dashboards: DashboardService; slo: SloService; replay: ReplayService; federatedOverview?: FederatedOverviewProvider }): Endpoint[] {
  const { dashboards, slo, replay } = deps;
  return [
    defineEndpoint({
      id: 'empireDashboard',
      title: 'Toolset dashboard',
      description:
        'One toolset\'s events in the window (`24h`, `7d` or `30d` of whole UTC hours by event time, the current hour last; default `24h`), of one source tenant when `tenant` is given: ' +
        `hourly counts (zeros included), the KPIs of docs/empire/README.md, and the ${BREAKDOWN_LIMIT} largest event types and tenants (a tenant of null counts events that named none). ` +
        'A toolset that never sent an event answers zeros and says so in `blurb`. A token bound to other toolsets is refused (403).',
      method: 'GET',
      path: `${V1}/empire/{toolset}/dashboard`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/empire/toolset',
      params: ToolsetParams,
      query: Type.Object({
        tenant: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Only events from this source tenant.' })),
        window: Type.Optional(StringEnum(windowKeys(DASHBOARD_WINDOWS), { default: '24h' })),
      }, { examples: [{ tenant: 'acme', window: '24h' }] }),
      response: {
        schemaId: 'svc-empire-dashboard.v1',
        fields: {
          toolset: Type.String(),
          tenant: Nullable(Type.String()),
          window: StringEnum(windowKeys(DASHBOARD_WINDOWS)),
          windowStartIso: IsoDate,
          windowEndIso: { ...IsoDate, description: 'Exclusive: the end of the current hour.' },
          blurb: Type.String(),
          kpis: Type.Array(Kpi),
          eventsPerHour: Type.Array(Type.Object({ bucketIso: { ...IsoDate, description: 'The hour\'s start.' }, count: Count })),
          eventTypeBreakdown: Type.Array(Type.Object({ eventType: Type.String(), count: Count })),
          tenantBreakdown: Type.Array(Type.Object({ tenant: Nullable(Type.String()), count: Count })),
          lastEventAt: Nullable({ ...IsoDate, description: 'The event time of its latest event, in the window or before.' }),
        },
      },
      example: {
        schema: 'svc-empire-dashboard.v1',
        generatedAt,
        toolset: 'crawler-lab',
        tenant: null,
        window: '24h',
        windowStartIso: '2026-11-23T09:00:00.000Z',
        windowEndIso: '2026-11-24T09:00:00.000Z',
        blurb: '1,204 events from crawler-lab in the last 24 hours from 3 tenants; 98.5% signed; most common type crawl.page (81.2%).',
        kpis: [
          { id: 'events', label: 'Events', precision: 0, unit: null, value: 1204 },
          { id: 'events-per-hour', label: 'Events per hour (mean)', precision: 1, unit: 'events/h', value: 50.2 },
          { id: 'signed-pct', label: 'Signed events', precision: 1, unit: '%', value: 98.5 },
        ],
        eventsPerHour: [
          { bucketIso: '2026-11-23T09:00:00.000Z', count: 48 },
          { bucketIso: '2026-11-23T10:00:00.000Z', count: 51 },
        ],
        eventTypeBreakdown: [
          { eventType: 'crawl.page', count: 978 },
          { eventType: 'crawl.started', count: 113 },
        ],
        tenantBreakdown: [
          { tenant: 'docs-mirror', count: 802 },
          { tenant: null, count: 12 },
        ],
        lastEventAt: '2026-11-24T08:59:12.000Z',
      },
      handler: async ({ params, query, principal }) => dashboards.dashboard(params.toolset, query, principal),
    }),
    defineEndpoint({
      id: 'empireOverview',
      title: 'Overview of every toolset',
      description:
        'Every toolset that has sent an event (of a bound token, its own toolsets only), by name: events in the last 24 hours and 7 days (whole UTC hours by event time, the current hour included), the time of its latest event, ' +
        'a 24-value hourly sparkline (oldest first; it sums to `events24h`) and a sentence comparing the last day with its 7-day average. ' +
        '`federated=1` answers the federated overview instead (the same answer as `GET {v1}/empire/overview/federated`, under this schema id): every active region of the registry is asked through the bridge and the rows are merged by toolset, with `participatingRegions`, `failedRegions` and per row `perRegion` (docs/federation/README.md, "Federated overview"). ' +
        'A peer deployment may call this read with the bridge token, without `federated=1` only: a bridge call asking for a fan-out is refused (403), so regions never ask each other in a loop.',
      method: 'GET',
      path: `${V1}/empire/overview`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/empire',
      bridge: true,
      query: Type.Object(
        { federated: Type.Optional(StringEnum(['0', '1'] as const, { description: '`1` fans out to every active region and merges the answers by toolset.' })) },
        { examples: [{ federated: '0' }] },
      ),
      response: {
        schemaId: 'svc-empire-overview.v1',
        fields: {
          windowEndIso: { ...IsoDate, description: 'Exclusive: the end of the current hour.' },
          toolsets: Type.Array(Type.Composite([OverviewRowSchema, Type.Object({ perRegion: Type.Optional(PerRegion) })])),
          participatingRegions: Type.Optional({ ...FederatedOverviewFields.participatingRegions, description: 'With `federated=1` only. ' + FederatedOverviewFields.participatingRegions.description }),
          failedRegions: Type.Optional({ ...FederatedOverviewFields.failedRegions, description: 'With `federated=1` only. ' + FederatedOverviewFields.failedRegions.description }),
        },
      },
      example: {
        schema: 'svc-empire-overview.v1',
        generatedAt,
        windowEndIso: '2026-11-24T09:00:00.000Z',
        toolsets: [
          {
            toolset: 'crawler-lab',
            blurb: '1,204 events in the last 24 hours, about as usual; latest event 2026-11-24T08:59:12.000Z.',
            events24h: 1204,
            events7d: 8420,
            lastEventAt: '2026-11-24T08:59:12.000Z',
            sparkline24h: [48, 51, 47, 50, 49, 52, 55, 61, 58, 50, 47, 44, 46, 49, 50, 52, 53, 48, 47, 45, 50, 51, 49, 32],
          },
        ],
      },
      handler: async ({ query, principal }) => {
        if (query.federated !== '1') return dashboards.overview(principal);
        if (principal?.via === 'bridge') {
          throw forbidden('A bridge call is answered from this deployment alone: federated=1 is refused over the bridge, so regions never fan out on each other\'s behalf.');
        }
        if (deps.federatedOverview === undefined) return dashboards.overview(principal);
        return deps.federatedOverview(principal);
      },
    }),
    defineEndpoint({
      id: 'empireSlo',
      title: 'Empire ingest SLO',
      description:
        'Per toolset, the outcomes and latency of its ingest requests received in the window (`1h`, `24h` or `7d`, default `24h`): every toolset sampled in the last 7 days is listed, by name (of a bound token, its own toolsets only). ' +
        `Latency percentiles are exact over every sample. Badge: \`unknown\` under ${SLO_BADGE_THRESHOLDS.minSamples} samples; \`green\` at an ok rate of at least ${SLO_BADGE_THRESHOLDS.green.okRatePct}% and p95 at most ${SLO_BADGE_THRESHOLDS.green.p95Ms} ms; ` +
        `\`yellow\` at ${SLO_BADGE_THRESHOLDS.yellow.okRatePct}% and ${SLO_BADGE_THRESHOLDS.yellow.p95Ms} ms; else \`red\` (docs/empire/README.md). \`ok\` is a request whose every event was admitted or a duplicate, none of them unsigned while the toolset had an active key; such a request is \`compat-unsigned-with-keys\` (a signing downgrade), one with refused events \`rejected-events\`, a refused request its error reason.`,
      method: 'GET',
      path: `${V1}/empire/slo`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/empire/slo',
      query: Type.Object({ window: Type.Optional(StringEnum(windowKeys(EMPIRE_SLO_WINDOWS), { default: '24h' })) }, { examples: [{ window: '24h' }] }),
      response: {
        schemaId: 'svc-empire-slo.v1',
        fields: {
          window: StringEnum(windowKeys(EMPIRE_SLO_WINDOWS)),
          windowStartIso: IsoDate,
          thresholds: Type.Object({ minSamples: Count, green: Bound, yellow: Bound }, { description: 'The badge thresholds in force.' }),
          rows: Type.Array(SloRow),
        },
      },
      example: {
        schema: 'svc-empire-slo.v1',
        generatedAt,
        window: '24h',
        windowStartIso: '2026-11-23T08:00:00.000Z',
        thresholds: SLO_BADGE_THRESHOLDS,
        rows: [
          {
            toolset: 'crawler-lab',
            badge: 'green',
            totalSamples: 1440,
            okCount: 1438,
            okRatePct: 99.86,
            outcomeBreakdown: [
              { outcome: 'ok', count: 1438 },
              { outcome: 'rejected-events', count: 2 },
            ],
            p50Ms: 6.1,
            p95Ms: 18.4,
            p99Ms: 41.9,
          },
        ],
      },
      handler: async ({ query, principal }) => slo.slo(query.window, principal),
    }),
    defineEndpoint({
      id: 'empireReplay',
      title: 'Replay a toolset\'s stored event',
      description:
        'Rebuilds a stored event\'s signed bytes from what was stored and derives again what ingest derived from them: the schema version, `eventHash`, the hash its admission attested, `bodyBytes`, ' +
        'and the admission itself (the signature checked again under the toolset\'s keys and the signing rule now in force). `fields` lists what differs; `matches` is true when nothing does. ' +
        `\`eventId\` is the eventId ingest answered or the toolset's own id; 404 when the toolset has no such event. A token bound to other toolsets is refused (403). Without \`eventId\` (or with \`list=1\`) the \`limit\` (default ${REPLAY_LIST_DEFAULT}, at most ${REPLAY_LIST_MAX}) most recently received envelopes are listed, each replayed. Both together is 400.`,
      method: 'GET',
      path: `${V1}/empire/{toolset}/replay`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/empire/replay',
      params: ToolsetParams,
      query: Type.Object({
        eventId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
        list: Type.Optional(StringEnum(['0', '1'] as const)),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: REPLAY_LIST_MAX, default: REPLAY_LIST_DEFAULT })),
      }, { examples: [{ list: '1', limit: 20 }] }),
      response: {
        schemaId: 'svc-empire-replay.v1',
        fields: {
          mode: StringEnum(['event', 'list'] as const),
          toolset: Type.String(),
          eventId: Nullable(Type.String({ format: 'uuid' })),
          id: Nullable(Type.String({ description: 'The toolset\'s own id of the event.' })),
          matches: Type.Boolean({ description: 'In a list: whether every listed event matches.' }),
          compared: Type.Array(StringEnum(REPLAYED_FIELDS)),
          fields: Type.Array(Type.Object({ field: StringEnum(REPLAYED_FIELDS), stored: Nullable(Type.String()), replayed: Nullable(Type.String()) })),
          envelope: Nullable(Envelope),
          envelopes: Nullable(
            Type.Array(
              Type.Composite([
                Type.Object({ eventId: Type.String({ format: 'uuid' }), id: Type.String() }),
                Envelope,
                Type.Object({ matches: Type.Boolean(), differingFields: Type.Array(StringEnum(REPLAYED_FIELDS)) }),
              ]),
            ),
          ),
        },
      },
      example: {
        schema: 'svc-empire-replay.v1',
        generatedAt,
        mode: 'event',
        toolset: 'crawler-lab',
        eventId: '7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d01',
        id: 'evt-000121',
        matches: false,
        compared: [...REPLAYED_FIELDS],
        fields: [{ field: 'admission', stored: 'compat', replayed: 'rejected:unsigned' }],
        envelope: exampleEnvelope,
        envelopes: null,
      },
      handler: async ({ params, query, principal }) => replay.replay(params.toolset, query, principal),
    }),
  ];
}
