/**
 * The investigation proposer (docs/triage/README.md, "Investigation proposer"): suggests saved views an
 * operator would want open next. A view is only worth saving when it is narrower than "everything
 * in the window", so each proposal pins the filters that isolate one story:
 *
 * - With a focal event the operator asked about, exactly one view: that event's lineage, narrowed
 *   to its toolset, tenant and event type. Its time range covers both the window and the whole
 *   lineage (an upstream cause may predate the window; a view that starts after it would hide it).
 * - Without one, up to three cluster-level views from three angles: the honeypot's LIAR clusters
 *   (grouped per tenant, since the view filters by tenant and uaClass, not by ja4), a toolset whose
 *   window count stands out against its forecast (narrowed to its top event type), and a tenant that
 *   reaches several toolsets at once. Each angle's strongest candidate comes first (most events),
 *   so three views show three different things before a second view of any one angle; the rest
 *   follow by events. Ties break by angle, then by name, so the ranking is deterministic.
 *
 * A rate only "stands out" upwards here: a silent toolset has no event to look at (the incident
 * classifier proposes silences). Times in filters are the snapshot's own strings, never a clock.
 */
import { withDataRules } from '../../../platform/llm/untrusted.ts';
import type { InvestigationProposalDraft, InvestigationSnapshot, ViewFilters } from './types.ts';
import { byTime, clip, cmp, fmt, plural } from './text.ts';

export interface InvestigationProposerParams {
  /** Cluster-level investigations per run at most (never above 3, spec C). */
  maxInvestigations: number;
  /** A tenant's LIAR clusters need at least this many events together. */
  minLiarClusterEvents: number;
  /** A toolset stands out from this many times its expected window count… */
  rateFactor: number;
  /** …and at least this many events. */
  minToolsetEvents: number;
  /** A tenant in at least this many toolsets is a view of its own; null: the angle is off. */
  crossToolsetMin: number | null;
  /** Event ids cited per investigation at most. */
  maxEvidence: number;
}

/** Spec C: up to three cluster-level investigations. */
export const MAX_INVESTIGATIONS = 3;
const NAME_MAX = 120;
const BULLET_MAX = 300;
const EVIDENCE_MAX = 50;

function systemPrompt(p: InvestigationProposerParams): string {
  const cross = p.crossToolsetMin === null ? '' : `\n  3. a crossToolset tenant in >= ${p.crossToolsetMin} toolsets: tenant set, toolset = the first of its toolsets by name, evidence its sampleEvents of that toolset.`;
  return withDataRules(`You are the investigation proposer of Observatory, a honeypot and multi-toolset event monitor.
You propose saved investigation views: filter sets an operator opens to follow one story in the data.

Input: the data block holds one JSON object (InvestigationSnapshot): the triage window (windowStart, windowEnd, windowMinutes, toolsets[],
honeypot[], crossToolset[], openIncidents[]) plus focal (the event the operator asked about, with upstream[] and
downstream[] lineage events {eventId, toolset, eventType, ts}, or null) and clusters[] {ja4, uaClass, asn, tenant,
events, fingerprints, sampleEventIds[]}.

Output: only JSON {"proposals": [...]}, each proposal:
{"kind":"investigation","toolset":string,"name":string (<= 120 chars),"rationale":[string,string,string],
 "filters":{"toolset":string|null,"tenant":string|null,"eventType":string|null,"uaClass":string|null,
            "fingerprintId":string|null,"focalEventId":string|null,"from":string,"to":string},
 "evidenceEventIds":[string]}
Every filters member is present; null means "any". rationale is exactly three bullets of <= 300 chars, each with numbers.

Rules:
- focal not null: exactly one proposal: focalEventId, toolset, tenant and eventType of the focal event; from/to cover
  both the window and the earliest and latest lineage ts. Cite the focal and lineage event ids.
- focal null: at most ${Math.min(p.maxInvestigations, MAX_INVESTIGATIONS)} proposals, the strongest first, one per angle before a second of any:
  1. a honeypot tenant whose uaClass LIAR clusters total >= ${p.minLiarClusterEvents} events: toolset "honeypot", uaClass "LIAR",
     tenant set, fingerprintId null;
  2. a toolset with events >= ${p.rateFactor} * expected (expected = forecast.baselineMean * windowMinutes / 60, at least 1)
     and >= ${p.minToolsetEvents} events: toolset set, eventType = its top event type;${cross}
  from/to are windowStart/windowEnd exactly as given.
- Copy timestamps from the input; never invent ids: evidenceEventIds (at most ${p.maxEvidence}) come from the input's id lists
  and are events of the proposal's toolset only ("honeypot": honeypot and cluster ids); a focal proposal cites the lineage
  events of the focal event's toolset.
- Names and rationale carry no links.
- Nothing stands out: {"proposals": []}.`);
}

export const INVESTIGATION_PROPOSER_PARAMS_1_0_0: InvestigationProposerParams = {
  maxInvestigations: 2,
  minLiarClusterEvents: 50,
  rateFactor: 5,
  minToolsetEvents: 50,
  crossToolsetMin: null,
  maxEvidence: 20,
};

export const INVESTIGATION_PROPOSER_PARAMS_1_1_0: InvestigationProposerParams = {
  maxInvestigations: 3,
  minLiarClusterEvents: 20,
  rateFactor: 3,
  minToolsetEvents: 20,
  crossToolsetMin: 3,
  maxEvidence: 20,
};

/** Oldest first; the last is the current version. */
export const INVESTIGATION_PROPOSER_VERSIONS: readonly { version: string; systemPrompt: string; params: InvestigationProposerParams }[] = [
  { version: '1.0.0', systemPrompt: systemPrompt(INVESTIGATION_PROPOSER_PARAMS_1_0_0), params: INVESTIGATION_PROPOSER_PARAMS_1_0_0 },
  { version: '1.1.0', systemPrompt: systemPrompt(INVESTIGATION_PROPOSER_PARAMS_1_1_0), params: INVESTIGATION_PROPOSER_PARAMS_1_1_0 },
];

const bullets = (a: string, b: string, c: string): [string, string, string] => [clip(a, BULLET_MAX), clip(b, BULLET_MAX), clip(c, BULLET_MAX)];
const uniqueIds = (ids: readonly string[], max: number) => [...new Set(ids)].slice(0, Math.min(max, EVIDENCE_MAX));

const filtersOf = (f: Partial<ViewFilters> & { from: string; to: string }): ViewFilters => ({
  toolset: f.toolset ?? null,
  tenant: f.tenant ?? null,
  eventType: f.eventType ?? null,
  uaClass: f.uaClass ?? null,
  fingerprintId: f.fingerprintId ?? null,
  focalEventId: f.focalEventId ?? null,
  from: f.from,
  to: f.to,
});

type Focal = NonNullable<InvestigationSnapshot['focal']>;

function focalInvestigation(s: InvestigationSnapshot, focal: Focal, p: InvestigationProposerParams): InvestigationProposalDraft {
  const self = { eventId: focal.eventId, toolset: focal.toolset, eventType: focal.eventType, ts: focal.ts };
  const order = (a: typeof self, b: typeof self) => byTime(a.ts, b.ts) || cmp(a.eventId, b.eventId);
  const upstream = [...focal.upstream].sort(order);
  const downstream = [...focal.downstream].sort(order);
  const lineage = [...upstream, self, ...downstream].sort(order);
  const times = [...lineage.map((e) => e.ts), s.windowStart, s.windowEnd].sort(byTime);
  const from = times[0] ?? s.windowStart;
  const to = times[times.length - 1] ?? s.windowEnd;
  const toolsets = [...new Set(lineage.map((e) => e.toolset))].sort(cmp);
  const first = lineage[0] ?? self;
  const last = lineage[lineage.length - 1] ?? self;
  const origin = upstream[0];
  const window = s.toolsets.find((t) => t.toolset === focal.toolset);
  const third = origin
    ? `Earliest upstream event: ${origin.eventType} in ${origin.toolset} at ${origin.ts} (${origin.eventId}), the probable start of the chain.`
    : `No upstream event: the focal event starts its chain${downstream.length > 0 ? `, and ${plural(downstream.length, 'event')} follow${downstream.length === 1 ? 's' : ''} from it` : ''}.`;
  const windowText = window
    ? ` In the window ${focal.toolset} received ${window.events} events from ${plural(window.tenants, 'tenant')}.`
    : '';
  return {
    kind: 'investigation',
    toolset: focal.toolset,
    name: clip(`Lineage of ${focal.eventType} ${focal.eventId} in ${focal.toolset}`, NAME_MAX),
    rationale: bullets(
      `Focal event ${focal.eventId}: ${focal.eventType} in ${focal.toolset} at ${focal.ts}${focal.tenant === null ? ', no source tenant' : `, tenant ${focal.tenant}`}.`,
      `Lineage: ${upstream.length} upstream and ${downstream.length} downstream events across ${plural(toolsets.length, 'toolset')} (${toolsets.join(', ')}), from ${first.ts} to ${last.ts}.`,
      `${third}${windowText}`,
    ),
    filters: filtersOf({ toolset: focal.toolset, tenant: focal.tenant, eventType: focal.eventType, focalEventId: focal.eventId, from, to }),
    // The lineage may cross toolsets; the proposal (a view of the focal toolset) cites only that toolset's events.
    evidenceEventIds: uniqueIds(lineage.filter((e) => e.toolset === focal.toolset).map((e) => e.eventId), p.maxEvidence),
  };
}

type Angle = 'liar' | 'rate' | 'cross';
const ANGLES: Angle[] = ['liar', 'rate', 'cross'];

interface Candidate {
  angle: Angle;
  /** What ranks it: events behind the story. */
  events: number;
  draft: InvestigationProposalDraft;
}

function liarCandidates(s: InvestigationSnapshot, p: InvestigationProposerParams): Candidate[] {
  const byTenant = new Map<string, InvestigationSnapshot['clusters']>();
  for (const c of s.clusters) {
    if (c.uaClass !== 'LIAR') continue;
    byTenant.set(c.tenant, [...(byTenant.get(c.tenant) ?? []), c]);
  }
  const out: Candidate[] = [];
  for (const [tenant, list] of byTenant) {
    const clusters = [...list].sort(
      (a, b) => b.events - a.events || b.fingerprints - a.fingerprints || cmp(a.ja4 ?? '', b.ja4 ?? '') || (a.asn ?? -1) - (b.asn ?? -1) || cmp(JSON.stringify(a.sampleEventIds), JSON.stringify(b.sampleEventIds)),
    );
    const events = clusters.reduce((n, c) => n + c.events, 0);
    const fingerprints = clusters.reduce((n, c) => n + c.fingerprints, 0);
    const top = clusters[0];
    if (!top || events < p.minLiarClusterEvents) continue;
    const hp = s.honeypot.find((h) => h.tenant === tenant);
    out.push({
      angle: 'liar',
      events,
      draft: {
        kind: 'investigation',
        toolset: 'honeypot',
        name: clip(`LIAR clients at ${tenant}: ${events} events`, NAME_MAX),
        rationale: bullets(
          `${events} LIAR events from ${plural(fingerprints, 'fingerprint')} in ${plural(clusters.length, 'cluster')} at honeypot tenant ${tenant} in ${s.windowMinutes} minutes.`,
          `Largest cluster: ja4 ${top.ja4 ?? 'unknown'}, ASN ${top.asn ?? 'unknown'}: ${plural(top.events, 'event')} from ${plural(top.fingerprints, 'fingerprint')}.`,
          hp
            ? `${hp.liarEvents} of ${hp.events} events at ${tenant} were LIAR (${fmt(hp.events > 0 ? (hp.liarEvents / hp.events) * 100 : 0)}%); ${plural(hp.tarpitsTriggered.length, 'tarpit')} triggered in the window.`
            : `The view lists every LIAR event of ${tenant} in the window, any fingerprint, ${plural(clusters.length, 'cluster')} so far.`,
        ),
        filters: filtersOf({ toolset: 'honeypot', tenant, uaClass: 'LIAR', from: s.windowStart, to: s.windowEnd }),
        evidenceEventIds: uniqueIds(clusters.flatMap((c) => c.sampleEventIds), p.maxEvidence),
      },
    });
  }
  return out;
}

function rateCandidates(s: InvestigationSnapshot, p: InvestigationProposerParams): Candidate[] {
  const out: Candidate[] = [];
  for (const t of s.toolsets) {
    if (t.forecast === null || t.events < p.minToolsetEvents) continue;
    const expected = (t.forecast.baselineMean * s.windowMinutes) / 60;
    const ratio = t.events / Math.max(expected, 1);
    if (ratio < p.rateFactor) continue;
    const topType = [...t.topEventTypes].sort((a, b) => b.count - a.count || cmp(a.eventType, b.eventType))[0];
    out.push({
      angle: 'rate',
      events: t.events,
      draft: {
        kind: 'investigation',
        toolset: t.toolset,
        name: clip(`${t.toolset}: ${topType ? `${topType.eventType} ` : ''}surge (${fmt(ratio)}× expected)`, NAME_MAX),
        rationale: bullets(
          `${t.toolset} received ${t.events} events in ${s.windowMinutes} minutes against about ${fmt(expected)} expected from its baseline of ${fmt(t.forecast.baselineMean)} an hour (${fmt(ratio)}×).`,
          topType
            ? `Top event type ${topType.eventType}: ${topType.count} of ${t.events} events, from ${plural(t.tenants, 'tenant')}.`
            : `No event type recorded for the ${t.events} events, from ${plural(t.tenants, 'tenant')}.`,
          `Forecast level ${t.forecast.level}, score ${t.forecast.score}, recent mean ${fmt(t.forecast.recentMean)} an hour (computed ${t.forecast.computedAt}).`,
        ),
        filters: filtersOf({ toolset: t.toolset, eventType: topType?.eventType ?? null, from: s.windowStart, to: s.windowEnd }),
        evidenceEventIds: uniqueIds(t.sampleEventIds, p.maxEvidence),
      },
    });
  }
  return out;
}

function crossCandidates(s: InvestigationSnapshot, p: InvestigationProposerParams): Candidate[] {
  if (p.crossToolsetMin === null) return [];
  const out: Candidate[] = [];
  for (const x of s.crossToolset) {
    const toolsets = [...new Set(x.toolsets)].sort(cmp);
    const first = toolsets[0];
    if (first === undefined || toolsets.length < p.crossToolsetMin) continue;
    const windows = s.toolsets.filter((t) => toolsets.includes(t.toolset));
    const total = windows.reduce((n, t) => n + t.events, 0);
    out.push({
      angle: 'cross',
      events: x.events,
      draft: {
        kind: 'investigation',
        toolset: first,
        name: clip(`Tenant ${x.tenant} across ${toolsets.length} toolsets`, NAME_MAX),
        rationale: bullets(
          `Tenant ${x.tenant} sent ${x.events} events to ${toolsets.length} toolsets in ${s.windowMinutes} minutes: ${toolsets.join(', ')}.`,
          total > 0
            ? `Those toolsets received ${total} events in the window; ${x.tenant} sent ${fmt((x.events / total) * 100)}% of them.`
            : `None of the ${toolsets.length} toolsets has a window row to compare the ${x.events} events with.`,
          `The view starts from ${first} (1 of ${toolsets.length}); switch its toolset to follow ${x.tenant} into the others.`,
        ),
        filters: filtersOf({ toolset: first, tenant: x.tenant, from: s.windowStart, to: s.windowEnd }),
        // Its own toolset's events only: a proposal never cites another toolset's.
        evidenceEventIds: uniqueIds(x.sampleEvents.filter((e) => e.toolset === first).map((e) => e.eventId), p.maxEvidence),
      },
    });
  }
  return out;
}

const strongest = (a: Candidate, b: Candidate) => b.events - a.events || ANGLES.indexOf(a.angle) - ANGLES.indexOf(b.angle) || cmp(a.draft.name, b.draft.name) || cmp(JSON.stringify(a.draft), JSON.stringify(b.draft));

/** The built-in engine: pure; one focal investigation, or at most three cluster-level ones. */
export function proposeInvestigations(snapshot: InvestigationSnapshot, params: InvestigationProposerParams): InvestigationProposalDraft[] {
  if (snapshot.focal !== null) return [focalInvestigation(snapshot, snapshot.focal, params)];
  const all = [...liarCandidates(snapshot, params), ...rateCandidates(snapshot, params), ...crossCandidates(snapshot, params)].sort(strongest);
  const leaders = ANGLES.map((angle) => all.find((c) => c.angle === angle)).filter((c): c is Candidate => c !== undefined).sort(strongest);
  const rest = all.filter((c) => !leaders.includes(c));
  const limit = Math.max(0, Math.min(params.maxInvestigations, MAX_INVESTIGATIONS));
  return [...leaders, ...rest].slice(0, limit).map((c) => c.draft);
}
