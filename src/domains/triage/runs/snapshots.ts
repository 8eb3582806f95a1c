import type { Db } from '../../../platform/db/client.ts';
import type { ForecastView, LineageEvent } from '../../empire/index.ts';
import type { InvestigationSnapshot, PostmortemSnapshot, RuleSnapshot, ToolsetHistory, ToolsetWindow, TriageSnapshot } from '../agents/types.ts';
import { cmp } from '../agents/text.ts';
import { HONEYPOT_TOOLSET } from '../agents/types.ts';
import { empireTriageFacts } from '../../empire/index.ts';
import { honeypotTriageFacts } from '../../honeypot/index.ts';
import * as repo from './repository.ts';

/**
 * What each agent is shown (docs/triage/README.md, "What the agents read"): plain data, sorted, so the
 * same stored state always gives the same user message, byte for byte.
 */

const SAMPLES = 20;
const TOP_TYPES = 5;
const TOP_FINGERPRINTS = 5;
const CROSS_TOOLSET_TENANTS = 10;
/** Events shown of each toolset of a cross-toolset tenant. */
const CROSS_TOOLSET_SAMPLES = 5;
const OPEN_INCIDENTS = 50;
const CLUSTERS = 10;
const CLUSTER_SAMPLES = 10;
const HOUR_MS = 3_600_000;
export const EXAMPLES_EACH = 10;
/** Events of an incident's lineage shown to the postmortem writer at most. */
export const POSTMORTEM_LINEAGE_MAX = 200;
/** Incident events whose lineage is walked, and steps each way. */
const POSTMORTEM_ROOTS = 50;
const POSTMORTEM_DEPTH = 50;


/** The incident classifier's window: every toolset active in it or forecast, the honeypot tenants, cross-toolset tenants, open incidents. */
export async function triageSnapshot(db: Db, from: Date, to: Date, forecasts: readonly ForecastView[]): Promise<TriageSnapshot> {
  const [totals, types, samples, cross, honeypot, tarpits, open] = await Promise.all([
    empireTriageFacts.toolsetTotals(db, from, to),
    empireTriageFacts.toolsetEventTypes(db, from, to),
    empireTriageFacts.toolsetSamples(db, from, to, SAMPLES),
    empireTriageFacts.crossToolsetTenants(db, from, to, CROSS_TOOLSET_TENANTS, CROSS_TOOLSET_SAMPLES),
    honeypotTriageFacts.tenantWindows(db, from, to, { fingerprints: TOP_FINGERPRINTS, samples: SAMPLES }),
    honeypotTriageFacts.tarpitsTriggered(db, from, to),
    empireTriageFacts.openIncidents(db, OPEN_INCIDENTS),
  ]);
  const names = new Set([...totals.map((t) => t.toolset), ...forecasts.map((f) => f.toolset)]);
  const toolsets: ToolsetWindow[] = [...names].sort(cmp).map((toolset) => {
    const total = totals.find((t) => t.toolset === toolset);
    const forecast = forecasts.find((f) => f.toolset === toolset);
    return {
      toolset,
      events: total?.events ?? 0,
      tenants: total?.tenants ?? 0,
      topEventTypes: types
        .filter((t) => t.toolset === toolset)
        .sort((a, b) => b.count - a.count || cmp(a.eventType, b.eventType))
        .slice(0, TOP_TYPES)
        .map(({ eventType, count }) => ({ eventType, count })),
      sampleEventIds: samples.filter((s) => s.toolset === toolset).map((s) => s.eventId),
      forecast: forecast
        ? { score: forecast.score, level: forecast.level, baselineMean: forecast.baselineMean, recentMean: forecast.recentMean, computedAt: forecast.computedAt }
        : null,
    };
  });
  const honeypotTenants = new Set([...honeypot.map((h) => h.tenant), ...tarpits.map((t) => t.tenant)]);
  return {
    windowStart: from.toISOString(),
    windowEnd: to.toISOString(),
    windowMinutes: Math.round((to.getTime() - from.getTime()) / 60_000),
    toolsets,
    honeypot: [...honeypotTenants].sort(cmp).map((tenant) => {
      const h = honeypot.find((x) => x.tenant === tenant);
      return {
        tenant,
        events: h?.events ?? 0,
        liarEvents: h?.liarEvents ?? 0,
        topLiarFingerprints: h?.topLiarFingerprints ?? [],
        tarpitsTriggered: tarpits
          .filter((t) => t.tenant === tenant)
          .slice(0, 10)
          .map(({ fingerprintId, triggeredAt, liarEventCount }) => ({ fingerprintId, triggeredAt, liarEventCount })),
        sampleLiarEventIds: h?.sampleLiarEventIds ?? [],
      };
    }),
    crossToolset: cross,
    openIncidents: open,
  };
}

/**
 * Every toolset a classifier or investigation snapshot holds (`honeypot` when it holds honeypot
 * facts): the run's `toolsets` (who may read its replay) and the names its proposals may not
 * speak of but their own (proposals/checks.ts).
 */
export function snapshotToolsets(snapshot: TriageSnapshot | InvestigationSnapshot): string[] {
  const toolsets = [...snapshot.toolsets.map((t) => t.toolset), ...snapshot.crossToolset.flatMap((x) => x.toolsets), ...snapshot.openIncidents.map((i) => i.toolset)];
  if (snapshot.honeypot.length > 0) toolsets.push(HONEYPOT_TOOLSET);
  if ('clusters' in snapshot) {
    if (snapshot.clusters.length > 0) toolsets.push(HONEYPOT_TOOLSET);
    const focal = snapshot.focal;
    if (focal) toolsets.push(...[focal, ...focal.upstream, ...focal.downstream].map((e) => e.toolset));
  }
  return [...new Set(toolsets)];
}

/**
 * Every event id a classifier or investigation snapshot shows, with the toolset it belongs to
 * (`honeypot` for honeypot events): the ids its proposals may cite (proposals/checks.ts).
 */
export function shownEvents(snapshot: TriageSnapshot | InvestigationSnapshot): Map<string, string> {
  const shown = new Map<string, string>();
  const add = (id: string, toolset: string) => shown.set(id.toLowerCase(), toolset);
  for (const t of snapshot.toolsets) for (const id of t.sampleEventIds) add(id, t.toolset);
  for (const h of snapshot.honeypot) for (const id of h.sampleLiarEventIds) add(id, HONEYPOT_TOOLSET);
  for (const x of snapshot.crossToolset) for (const e of x.sampleEvents) add(e.eventId, e.toolset);
  if ('clusters' in snapshot) {
    for (const c of snapshot.clusters) for (const id of c.sampleEventIds) add(id, HONEYPOT_TOOLSET);
    const focal = snapshot.focal;
    if (focal) for (const e of [focal, ...focal.upstream, ...focal.downstream]) add(e.eventId, e.toolset);
  }
  return shown;
}

const lineageEntry = (e: LineageEvent) => ({ eventId: e.eventId, toolset: e.toolset, eventType: e.eventType, ts: e.ts });

/** The investigation proposer's window: the triage snapshot, honeypot clusters, and the focal event's lineage. */
export async function investigationSnapshot(
  db: Db,
  from: Date,
  to: Date,
  forecasts: readonly ForecastView[],
  focal: { focal: LineageEvent; upstream: LineageEvent[]; downstream: LineageEvent[] } | null,
): Promise<InvestigationSnapshot> {
  const [base, clusters] = await Promise.all([triageSnapshot(db, from, to, forecasts), honeypotTriageFacts.clusters(db, from, to, CLUSTERS, CLUSTER_SAMPLES)]);
  return {
    ...base,
    clusters,
    focal: focal
      ? {
          eventId: focal.focal.eventId,
          toolset: focal.focal.toolset,
          eventType: focal.focal.eventType,
          tenant: focal.focal.tenant,
          ts: focal.focal.ts,
          upstream: focal.upstream.slice(0, 100).map(lineageEntry),
          downstream: focal.downstream.slice(0, 100).map(lineageEntry),
        }
      : null,
  };
}

/** Hourly empire event counts per toolset for [from, to) by event time (the empire forecaster's series). */
export type HourlyCounts = (from: Date, to: Date) => Promise<{ toolset: string; hour: number; count: number }[]>;

/** The rule proposer's lookback: hourly counts per toolset, resolved incidents, fed-back decisions, existing rules. */
export async function ruleSnapshot(db: Db, now: Date, lookbackDays: number, hourlyCounts: HourlyCounts): Promise<RuleSnapshot> {
  const to = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
  const from = new Date(to.getTime() - lookbackDays * 24 * HOUR_MS);
  const hours = lookbackDays * 24;
  const [counts, resolvedIncidents, examples, existingRules] = await Promise.all([
    hourlyCounts(from, to),
    empireTriageFacts.resolvedIncidents(db, from, to),
    repo.ruleExamples(db, EXAMPLES_EACH),
    empireTriageFacts.enabledRulePredicates(db),
  ]);
  const history = new Map<string, number[]>();
  for (const { toolset, hour, count } of counts) {
    if (hour < 0 || hour >= hours) continue;
    const series = history.get(toolset) ?? new Array<number>(hours).fill(0);
    series[hour] = count;
    history.set(toolset, series);
  }
  return {
    lookbackDays,
    from: from.toISOString(),
    to: to.toISOString(),
    history: [...history].sort(([a], [b]) => cmp(a, b)).map(([toolset, series]): ToolsetHistory => ({ toolset, hours: series })),
    resolvedIncidents,
    examples,
    existingRules,
  };
}

export interface IncidentForDraft {
  id: string;
  toolset: string;
  severity: PostmortemSnapshot['incident']['severity'];
  title: string;
  status: string;
  source: string;
  eventIds: string[];
  openedAt: string;
  resolvedAt: string | null;
}

/**
 * The postmortem writer's input: the incident and its lineage, i.e. its own events and every event
 * their `causedBy` chains reach both ways (honeypot events have no chain: they stand alone). The
 * ids of this lineage are the only ones a draft may cite.
 */
export async function postmortemSnapshot(
  db: Db,
  incident: IncidentForDraft,
  operatorNotes: string | null,
  lineage: (eventId: string, depth: number) => Promise<{ focal: LineageEvent; upstream: LineageEvent[]; downstream: LineageEvent[] } | null>,
): Promise<{ snapshot: PostmortemSnapshot; lineageIds: Set<string> }> {
  const events = new Map<string, PostmortemSnapshot['lineage'][number]>();
  const roots = incident.eventIds.slice(0, POSTMORTEM_ROOTS);
  for (const id of roots) {
    if (events.size >= POSTMORTEM_LINEAGE_MAX * 4) break;
    const walked = await lineage(id, POSTMORTEM_DEPTH);
    if (!walked) continue;
    const walkedEvents = [walked.focal, ...walked.upstream, ...walked.downstream];
    // `causedBy` names the cause by the sender's id within its toolset; the writer links events by event id.
    const bySender = new Map(walkedEvents.map((e) => [`${e.toolset}\u0000${e.id}`, e.eventId]));
    for (const e of walkedEvents) {
      const causedBy = e.causedBy === null ? null : (bySender.get(`${e.toolset}\u0000${e.causedBy}`) ?? e.causedBy);
      events.set(e.eventId, { eventId: e.eventId, toolset: e.toolset, eventType: e.eventType, tenant: e.tenant, ts: e.ts, causedBy });
    }
  }
  for (const h of await honeypotTriageFacts.eventsById(db, roots.filter((id) => !events.has(id)))) {
    events.set(h.eventId, { eventId: h.eventId, toolset: 'honeypot', eventType: `honeypot.${h.uaClass}`, tenant: h.tenant, ts: h.ts.toISOString(), causedBy: null });
  }
  const ordered = [...events.values()].sort((a, b) => cmp(a.ts, b.ts) || cmp(a.eventId, b.eventId)).slice(0, POSTMORTEM_LINEAGE_MAX);
  const snapshot: PostmortemSnapshot = {
    incident: {
      id: incident.id,
      toolset: incident.toolset,
      severity: incident.severity,
      title: incident.title,
      status: incident.status,
      source: incident.source,
      openedAt: incident.openedAt,
      resolvedAt: incident.resolvedAt,
    },
    lineage: ordered,
    operatorNotes,
  };
  // Every id of the lineage may be cited, the ones beyond the shown cap included.
  return { snapshot, lineageIds: new Set([...events.keys(), ...incident.eventIds.map((id) => id.toLowerCase())]) };
}
