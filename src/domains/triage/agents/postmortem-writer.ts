/**
 * The postmortem writer (docs/triage/README.md, "Postmortem writer"): drafts the five-section postmortem
 * of one incident from its record and the events of its lineage.
 *
 * A draft is only useful if an operator can check every sentence, so each claim cites the lineage
 * events it talks about and nothing else (the pipeline strips any other id). The built-in engine
 * says only what the data shows: the timeline is where the events change type, the impact is
 * counted, and the root cause is the earliest event no other lineage event caused, called
 * "probable" because `causedBy` links and timing suggest an origin, they do not prove one. With no
 * lineage it says the cause is unknown instead of guessing. Operator notes are the operators' own
 * words, kept as a claim of their own (citing nothing).
 */
import { withDataRules } from '../../../platform/llm/untrusted.ts';
import type { Claim, PostmortemDraft, PostmortemSnapshot } from './types.ts';
import { TEXT_MAX } from './output.ts';
import { byTime, clip, cmp, plural } from './text.ts';

export interface PostmortemWriterParams {
  /** Claims per section at most. */
  maxClaimsPerSection: number;
  /** Event ids cited per claim at most. */
  maxEventIdsPerClaim: number;
  /** Impact per tenant (one claim each, citing its events) rather than one line listing them. */
  impactByTenant: boolean;
}

const CLAIM_TEXT_MAX = 1000;
const TENANTS_NAMED = 3;
const SEVERITY_WORD = { critical: 'Critical', major: 'Major', minor: 'Minor' } as const;

function systemPrompt(p: PostmortemWriterParams): string {
  return withDataRules(`You are the postmortem writer of Observatory, a honeypot and multi-toolset event monitor.
You draft the postmortem of one incident from its record and the events of its lineage.

Input: the data block holds one JSON object (PostmortemSnapshot): incident {id, toolset, severity, title, status, source, openedAt,
resolvedAt}; lineage[] {eventId, toolset, eventType, tenant, ts, causedBy}: the incident's events and every event
their causedBy chains reach both ways, oldest first; operatorNotes (text or null).

Output: only one JSON object:
{"title":string (<= 200 chars),"sections":{"summary":[Claim],"timeline":[Claim],"impact":[Claim],"rootCause":[Claim],
 "actionItems":[Claim]}} where Claim = {"text":string (one sentence, <= 1000 chars),"eventIds":[string]}.

Sections:
- summary: what happened, when, on which toolset, at which severity; cite the first events.
- timeline: first event, each change of event type, last event, incident opened and resolved, in time order.
- impact: events per type, tenants affected, with counts.
- rootCause: the earliest upstream event of the lineage (no causedBy inside the lineage) as the PROBABLE origin;
  say the cause is unknown when the lineage is empty. Never state a cause the data does not show.
- actionItems: concrete follow-ups (review the rule or forecast that opened it, check the tenants, inspect the
  producer of the origin event); operatorNotes, when given, become one claim in the operators' words.

Rules:
- eventIds cite only eventId values present in lineage; a claim about the incident record cites [].
- At most ${p.maxClaimsPerSection} claims per section and ${p.maxEventIdsPerClaim} eventIds per claim.
- Copy timestamps and counts from the input; do not invent events, tenants, ids or numbers. Write ids only as the input spells
  them, and no links.`);
}

export const POSTMORTEM_WRITER_PARAMS_1_0_0: PostmortemWriterParams = { maxClaimsPerSection: 5, maxEventIdsPerClaim: 10, impactByTenant: false };
export const POSTMORTEM_WRITER_PARAMS_1_1_0: PostmortemWriterParams = { maxClaimsPerSection: 8, maxEventIdsPerClaim: 20, impactByTenant: true };

/** Oldest first; the last is the current version. */
export const POSTMORTEM_WRITER_VERSIONS: readonly { version: string; systemPrompt: string; params: PostmortemWriterParams }[] = [
  { version: '1.0.0', systemPrompt: systemPrompt(POSTMORTEM_WRITER_PARAMS_1_0_0), params: POSTMORTEM_WRITER_PARAMS_1_0_0 },
  { version: '1.1.0', systemPrompt: systemPrompt(POSTMORTEM_WRITER_PARAMS_1_1_0), params: POSTMORTEM_WRITER_PARAMS_1_1_0 },
];

type LineageEvent = PostmortemSnapshot['lineage'][number];

function duration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return `${Math.max(0, Math.round(ms / 1000))} s`;
  if (minutes < 60) return `${minutes} min`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}

const where = (e: LineageEvent) => `${e.eventType} in ${e.toolset}${e.tenant === null ? '' : ` from tenant ${e.tenant}`}`;

/** Claims and the time they sort by (the timeline). */
interface Timed {
  at: string;
  /** Among claims of one instant: events first, then the incident's own moments. */
  rank: number;
  claim: Claim;
}

function countBy<K extends string>(events: readonly LineageEvent[], key: (e: LineageEvent) => K | null): { key: K; events: LineageEvent[] }[] {
  const groups = new Map<K, LineageEvent[]>();
  for (const e of events) {
    const k = key(e);
    if (k === null) continue;
    groups.set(k, [...(groups.get(k) ?? []), e]);
  }
  return [...groups].map(([k, list]) => ({ key: k, events: list })).sort((a, b) => b.events.length - a.events.length || cmp(a.key, b.key));
}

/** The built-in engine: pure; the same incident and lineage (in any order) give the same draft. */
export function writePostmortem(snapshot: PostmortemSnapshot, params: PostmortemWriterParams): PostmortemDraft {
  const maxClaims = Math.max(1, params.maxClaimsPerSection);
  const maxIds = Math.max(0, params.maxEventIdsPerClaim);
  const claim = (text: string, events: readonly LineageEvent[] = []): Claim => ({
    text: clip(text, CLAIM_TEXT_MAX),
    eventIds: [...new Set(events.map((e) => e.eventId))].slice(0, maxIds),
  });

  const { incident } = snapshot;
  // One entry per id (the first by time), oldest first.
  const ordered = [...snapshot.lineage].sort((a, b) => byTime(a.ts, b.ts) || cmp(a.eventId, b.eventId));
  const seen = new Set<string>();
  const lineage = ordered.filter((e) => (seen.has(e.eventId) ? false : (seen.add(e.eventId), true)));
  const first = lineage[0];
  const last = lineage[lineage.length - 1];
  const n = lineage.length;
  const types = countBy(lineage, (e) => e.eventType);
  const toolsets = countBy(lineage, (e) => e.toolset);
  const tenants = countBy(lineage, (e) => e.tenant);
  const resolvedMs = incident.resolvedAt === null ? NaN : Date.parse(incident.resolvedAt) - Date.parse(incident.openedAt);

  // The probable origin: the earliest event whose cause is not in the lineage, and what descends from it.
  const ids = new Set(lineage.map((e) => e.eventId));
  const roots = lineage.filter((e) => e.causedBy === null || !ids.has(e.causedBy));
  const origin = roots[0];
  const children = new Map<string, LineageEvent[]>();
  for (const e of lineage) if (e.causedBy !== null && ids.has(e.causedBy)) children.set(e.causedBy, [...(children.get(e.causedBy) ?? []), e]);
  const descendants: LineageEvent[] = [];
  if (origin) {
    const queue = [...(children.get(origin.eventId) ?? [])];
    const reached = new Set<string>([origin.eventId]);
    while (queue.length > 0) {
      const e = queue.shift()!;
      if (reached.has(e.eventId)) continue;
      reached.add(e.eventId);
      descendants.push(e);
      queue.push(...(children.get(e.eventId) ?? []));
    }
  }

  // ——— summary ———
  const summary: Claim[] = [
    claim(
      `${SEVERITY_WORD[incident.severity]} incident on ${incident.toolset}, "${incident.title}", opened ${incident.openedAt} by ${incident.source}; ${
        incident.resolvedAt === null
          ? `still ${incident.status}`
          : `resolved ${incident.resolvedAt}${Number.isFinite(resolvedMs) ? ` after ${duration(resolvedMs)}` : ''}`
      }.`,
      lineage.slice(0, 3),
    ),
    first && last
      ? claim(
          `Its lineage holds ${plural(n, 'event')} of ${plural(types.length, 'type')} in ${plural(toolsets.length, 'toolset')} (${toolsets.map((t) => t.key).join(', ')}), from ${first.ts} to ${last.ts}.`,
          [first, last],
        )
      : claim('No event is linked to this incident, so this draft rests on the incident record alone.'),
  ];

  // ——— timeline ———
  const runs: LineageEvent[][] = [];
  for (const e of lineage) {
    const run = runs[runs.length - 1];
    const head = run?.[0];
    if (run && head && head.eventType === e.eventType && head.toolset === e.toolset) run.push(e);
    else runs.push([e]);
  }
  const moments: Timed[] = [{ at: incident.openedAt, rank: 1, claim: claim(`${incident.openedAt}: incident opened (${incident.source}, ${incident.severity}).`) }];
  if (incident.resolvedAt !== null) moments.push({ at: incident.resolvedAt, rank: 2, claim: claim(`${incident.resolvedAt}: incident resolved.`) });
  const firstRun = runs[0];
  if (first && firstRun) {
    moments.push({ at: first.ts, rank: 0, claim: claim(`${first.ts}: first event, ${where(first)}; ${plural(firstRun.length, 'event')} of that type in a row.`, firstRun) });
  }
  const changes = runs.slice(1);
  const room = Math.max(0, maxClaims - moments.length - (n > 1 ? 1 : 0));
  const shown = changes.slice(0, room);
  for (const run of shown) {
    const head = run[0]!;
    moments.push({ at: head.ts, rank: 0, claim: claim(`${head.ts}: events turn to ${head.eventType} in ${head.toolset}, ${run.length} in a row.`, run) });
  }
  if (last && n > 1) {
    const hidden = changes.length - shown.length;
    moments.push({ at: last.ts, rank: 0, claim: claim(`${last.ts}: last event, ${where(last)}${hidden > 0 ? ` (after ${plural(hidden, 'more change')} of event type not listed)` : ''}.`, [last]) });
  }
  const timeline = moments
    .sort((a, b) => byTime(a.at, b.at) || a.rank - b.rank)
    .slice(0, maxClaims)
    .map((m) => m.claim);

  // ——— impact ———
  const impact: Claim[] = [];
  if (n === 0) {
    impact.push(claim('No linked events: the impact cannot be measured from the lineage.'));
  } else {
    const untenanted = lineage.filter((e) => e.tenant === null);
    const tenantClaims: Claim[] = [];
    if (params.impactByTenant) {
      for (const t of tenants.slice(0, TENANTS_NAMED)) {
        const reached = new Set(t.events.map((e) => e.toolset));
        tenantClaims.push(claim(`Tenant ${t.key}: ${plural(t.events.length, 'event')} of ${n} in ${plural(reached.size, 'toolset')}.`, t.events));
      }
      if (tenants.length > TENANTS_NAMED) tenantClaims.push(claim(`${plural(tenants.length - TENANTS_NAMED, 'more tenant')} sent the other events.`));
    } else if (tenants.length > 0) {
      tenantClaims.push(claim(`${plural(tenants.length, 'tenant')} affected: ${tenants.map((t) => `${t.key} (${t.events.length})`).join(', ')}.`));
    }
    if (untenanted.length > 0) tenantClaims.push(claim(`${plural(untenanted.length, 'event')} ${untenanted.length === 1 ? 'carries' : 'carry'} no source tenant.`, untenanted));
    const typeRoom = Math.max(1, maxClaims - tenantClaims.length);
    for (const t of types.slice(0, typeRoom)) {
      const inToolsets = [...new Set(t.events.map((e) => e.toolset))].sort(cmp);
      impact.push(claim(`${plural(t.events.length, 'event')} of type ${t.key} (${inToolsets.join(', ')}).`, t.events));
    }
    impact.push(...tenantClaims);
  }

  // ——— root cause ———
  const rootCause: Claim[] = [];
  if (!origin) {
    rootCause.push(claim('Unknown: the incident has no linked events to trace a cause from.'));
  } else {
    const outside = origin.causedBy !== null ? '; its recorded cause lies outside the lineage shown' : '';
    rootCause.push(
      claim(
        `Probable origin: ${where(origin)} at ${origin.ts}, the earliest event of the lineage that no other lineage event caused${outside}; ${
          descendants.length === 0 ? 'no other lineage event descends from it' : `${descendants.length} of the other ${n - 1} events descend from it`
        }.`,
        [origin],
      ),
    );
    const others = roots.slice(1);
    if (others.length > 0) {
      const otherTypes = [...new Set(others.map((e) => e.eventType))].sort(cmp);
      rootCause.push(claim(`${plural(others.length, 'other chain')} ${others.length === 1 ? 'starts' : 'start'} independently (${otherTypes.join(', ')}), so the origin above may be one of several causes.`, others));
    }
    rootCause.push(claim('This is inferred from causedBy links and timing; confirm it against the producer before closing the postmortem.'));
  }

  // ——— action items ———
  const actionItems: Claim[] = [];
  if (snapshot.operatorNotes !== null && snapshot.operatorNotes.trim() !== '') actionItems.push(claim(`Operator notes: ${snapshot.operatorNotes.trim()}`));
  actionItems.push(
    claim(
      incident.source === 'forecast'
        ? `Review the forecast of ${incident.toolset}: whether its baseline still matches normal traffic, and whether the latch was right to open this incident.`
        : `Review what opened this incident (source ${incident.source}) and whether its threshold or condition fits ${incident.toolset}.`,
    ),
  );
  if (origin) actionItems.push(claim(`Inspect the producer of ${origin.eventType} in ${origin.toolset} around ${origin.ts} for the change that started the chain.`, [origin]));
  const named = tenants.slice(0, TENANTS_NAMED);
  if (named.length > 0) {
    const count = named.reduce((s, t) => s + t.events.length, 0);
    actionItems.push(claim(`Check tenant${named.length === 1 ? '' : 's'} ${named.map((t) => t.key).join(', ')}: ${count} of the ${n} events came from ${named.length === 1 ? 'it' : 'them'}.`, named.flatMap((t) => t.events)));
  }
  actionItems.push(
    claim(
      incident.resolvedAt === null
        ? `The incident is still ${incident.status}: resolve it once the cause is confirmed, and record the fix here.`
        : `Make sure a rule or forecast on ${incident.toolset} would catch a recurrence earlier than this one.`,
    ),
  );

  const cap = (claims: Claim[]) => claims.slice(0, maxClaims);
  return {
    title: clip(`Postmortem: ${incident.title}`, TEXT_MAX.title),
    sections: { summary: cap(summary), timeline, impact: cap(impact), rootCause: cap(rootCause), actionItems: cap(actionItems) },
  };
}
