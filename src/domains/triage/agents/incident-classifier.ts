/**
 * The incident classifier (docs/triage/README.md, "Incident classifier"): reads one window of the fleet
 * and proposes incidents to open. The built-in engine is a handful of plain signals an operator
 * would check by hand, chosen so that a proposal is always explainable by the numbers in its own
 * summary:
 *
 * - rate-spike: a toolset's window count against what its forecast baseline predicts for a window
 *   that long (baselineMean × windowMinutes / 60). The ratio's divisor is never below one event,
 *   so a near-silent toolset's first handful of events does not read as an infinite ratio; and
 *   `minEvents` keeps small absolute numbers from ever paging anyone. A toolset without a forecast
 *   has nothing to compare with: it counts only past a large absolute count (`unforecastMinEvents`,
 *   off in 1.0.0), because a new toolset flooding the fleet is still worth a look.
 * - silence: a toolset whose forecast expects at least `silenceMinExpected` events in the window
 *   sent none (Poisson odds of that by chance are below e^−10 at the 1.1.0 cut-off). It has no
 *   event to cite, so its evidence is empty: the one signal allowed to carry none.
 * - liar-flood / tarpit: a honeypot tenant's LIAR events; tarpits already triggered make a flood
 *   major (the fleet has started defending itself). Tarpits alone become a `tarpit` proposal, never
 *   both: one proposal per tenant at most.
 * - cross-toolset (1.1.0): a tenant reaching many toolsets at once is worth an incident even when
 *   no single toolset looks wrong.
 *
 * The built-in engine never proposes `critical`: that level pages people, and a rule of thumb over
 * one window is not enough to wake someone; an operator escalates.
 *
 * Nothing is proposed twice: titles start with a signal marker and the subject (`Rate spike: web-x`,
 * `Liar flood: tenant-a`), and a proposal is skipped when an open incident of the same toolset has
 * a title starting with the same marker and subject. A forecaster incident (`Forecast: web-x event
 * rate surged|fell silent`) covers a rate spike or a silence of its toolset, and an open liar-flood
 * incident of a tenant covers its tarpits. Every proposal cites only event ids of the snapshot.
 */
import { withDataRules } from '../../../platform/llm/untrusted.ts';
import {
  type Claim,
  HONEYPOT_TOOLSET,
  type HoneypotWindow,
  type IncidentProposalDraft,
  type IncidentSeverity,
  type IncidentSignal,
  type PostmortemDraft,
  POSTMORTEM_SECTIONS,
  type PostmortemSection,
  SEVERITY_RANK,
  type ToolsetWindow,
  type TriageSnapshot,
} from './types.ts';
import { TEXT_MAX } from './output.ts';
import { clip, cmp, fmt, plural } from './text.ts';

export interface IncidentClassifierParams {
  /** A rate spike needs at least this many times the expected window count… */
  spikeFactor: number;
  /** …and at least this many events. */
  minEvents: number;
  /** A spike is major from this many times the expected count… */
  majorSpikeFactor: number;
  /** …or from this many events in the window. */
  majorSpikeEvents: number;
  /** A toolset without a forecast counts as spiking from this many events; null: never. */
  unforecastMinEvents: number | null;
  /** A silence needs the forecast to expect at least this many events in the window. */
  silenceMinExpected: number;
  /** A silence is major when the forecast expected at least this many. */
  silenceMajorExpected: number;
  /** A honeypot tenant floods from this many LIAR events in the window. */
  liarFloodMin: number;
  /** A flood is major when LIAR events are at least this share of the tenant's events (0..1), or tarpits triggered. */
  liarShareMajor: number;
  /** Tarpits triggered in the window that make a proposal on their own (without a flood). */
  tarpitMin: number;
  /** A tenant in at least this many toolsets is a cross-toolset proposal; null: the signal is off. */
  crossToolsetMin: number | null;
  /** Proposals per run at most (the most severe kept). */
  maxProposals: number;
}

/** Title markers, one per signal: the first words of every title, and the key of the "already open" check. */
export const SIGNAL_MARKERS: Record<Exclude<IncidentSignal, 'other'>, string> = {
  'rate-spike': 'Rate spike',
  silence: 'Silence',
  'liar-flood': 'Liar flood',
  tarpit: 'Tarpit',
  'cross-toolset': 'Cross-toolset',
};

const EVIDENCE_MAX = 50;
const CLAIM_IDS_MAX = 20;
const SIGNAL_ORDER: IncidentSignal[] = ['rate-spike', 'silence', 'liar-flood', 'tarpit', 'cross-toolset', 'other'];

function systemPrompt(p: IncidentClassifierParams): string {
  const cross = p.crossToolsetMin === null ? '' : `\n- cross-toolset: a crossToolset tenant in >= ${p.crossToolsetMin} toolsets (toolset = the first of its toolsets by name; minor; evidence: its sampleEvents of that toolset).`;
  const unforecast = p.unforecastMinEvents === null ? 'A toolset with forecast null never spikes.' : `A toolset with forecast null spikes only from ${p.unforecastMinEvents} events.`;
  return withDataRules(`You are the incident classifier of Observatory, a honeypot and multi-toolset event monitor.
You read one time window of the fleet and propose incidents an operator should open.

Input: the data block holds one JSON object (TriageSnapshot): windowStart, windowEnd, windowMinutes; toolsets[] {toolset, events,
tenants, topEventTypes[{eventType,count}], sampleEventIds[], forecast {score, level, baselineMean (events/hour),
recentMean, computedAt} | null}; honeypot[] {tenant, events, liarEvents, topLiarFingerprints[], tarpitsTriggered[],
sampleLiarEventIds[]}; crossToolset[] {tenant, toolsets[], events, sampleEvents[{eventId, toolset}]}; openIncidents[] {id, toolset, title, source}.

Signals (expected = baselineMean * windowMinutes / 60; ratio = events / max(expected, 1)):
- rate-spike: events >= ${p.spikeFactor} * expected and events >= ${p.minEvents}; major when ratio >= ${p.majorSpikeFactor} or events >= ${p.majorSpikeEvents}, else minor. ${unforecast}
- silence: forecast present, expected >= ${p.silenceMinExpected} and events = 0; major when expected >= ${p.silenceMajorExpected}. evidenceEventIds is [].
- liar-flood: honeypot tenant with liarEvents >= ${p.liarFloodMin}; toolset "honeypot"; major when any tarpit triggered or liarEvents/events >= ${p.liarShareMajor}.
- tarpit: honeypot tenant with >= ${p.tarpitMin} tarpitsTriggered and no liar-flood; toolset "honeypot"; minor.${cross}
Never propose critical. At most one honeypot proposal per tenant.

Output: only JSON {"proposals": [...]}, each proposal:
{"kind":"incident","toolset":string,"severity":"major"|"minor","signal":"rate-spike"|"silence"|"liar-flood"|"tarpit"|"cross-toolset",
 "title":string (<= 200 chars),"summary":string (one or two sentences with the numbers),"evidenceEventIds":[string],
 "postmortemDraft":{"title":string,"sections":{"summary":[Claim],"timeline":[Claim],"impact":[Claim],"rootCause":[Claim],"actionItems":[Claim]}}}
where Claim = {"text":string,"eventIds":[string]}.

Rules:
- Titles start with the signal marker and the subject: "Rate spike: <toolset>", "Silence: <toolset>", "Liar flood: <tenant>",
  "Tarpit: <tenant>", "Cross-toolset: <tenant>", then " — " and the numbers.
- Skip a proposal when openIncidents has one of the same toolset whose title starts with the same marker and subject,
  or a forecaster incident "Forecast: <toolset> event rate surged" (covers rate-spike) / "fell silent" (covers silence).
- evidenceEventIds: 1 to 50 ids taken only from this input's sample id lists, every one an event of the proposal's toolset
  (honeypot tenants' sampleLiarEventIds for toolset "honeypot"; silence: []). Claims cite only those ids.
- severity follows only from the rules above; summaries and claims carry no links.
- rootCause may say the cause is not yet known. Do not guess beyond the numbers.
- At most ${p.maxProposals} proposals, major before minor. Nothing wrong: {"proposals": []}.`);
}

export const INCIDENT_CLASSIFIER_PARAMS_1_0_0: IncidentClassifierParams = {
  spikeFactor: 5,
  minEvents: 50,
  majorSpikeFactor: 20,
  majorSpikeEvents: 5000,
  unforecastMinEvents: null,
  silenceMinExpected: 20,
  silenceMajorExpected: 200,
  liarFloodMin: 100,
  liarShareMajor: 0.8,
  tarpitMin: 3,
  crossToolsetMin: null,
  maxProposals: 5,
};

export const INCIDENT_CLASSIFIER_PARAMS_1_1_0: IncidentClassifierParams = {
  spikeFactor: 3,
  minEvents: 20,
  majorSpikeFactor: 10,
  majorSpikeEvents: 2000,
  unforecastMinEvents: 500,
  silenceMinExpected: 10,
  silenceMajorExpected: 100,
  liarFloodMin: 50,
  liarShareMajor: 0.5,
  tarpitMin: 1,
  crossToolsetMin: 3,
  maxProposals: 10,
};

/** Oldest first; the last is the current version. */
export const INCIDENT_CLASSIFIER_VERSIONS: readonly { version: string; systemPrompt: string; params: IncidentClassifierParams }[] = [
  { version: '1.0.0', systemPrompt: systemPrompt(INCIDENT_CLASSIFIER_PARAMS_1_0_0), params: INCIDENT_CLASSIFIER_PARAMS_1_0_0 },
  { version: '1.1.0', systemPrompt: systemPrompt(INCIDENT_CLASSIFIER_PARAMS_1_1_0), params: INCIDENT_CLASSIFIER_PARAMS_1_1_0 },
];

// ——— helpers ———

const uniqueIds = (ids: readonly string[], max: number) => [...new Set(ids)].slice(0, max);

/** An open incident covers a proposal when its title starts with `marker: subject` (then the end or a non-name character). */
function titleCovers(title: string, marker: string, subject: string): boolean {
  const prefix = `${marker}: ${subject}`;
  if (!title.startsWith(prefix)) return false;
  const rest = title.slice(prefix.length);
  return rest === '' || !/^[A-Za-z0-9_.-]/.test(rest);
}

function alreadyOpen(snapshot: TriageSnapshot, toolset: string, signal: IncidentSignal, subject: string): boolean {
  return snapshot.openIncidents.some((incident) => {
    if (incident.toolset !== toolset) return false;
    const markers: string[] = [];
    if (signal !== 'other') markers.push(SIGNAL_MARKERS[signal]);
    // An open flood of the tenant already holds its tarpits.
    if (signal === 'tarpit') markers.push(SIGNAL_MARKERS['liar-flood']);
    if (markers.some((m) => titleCovers(incident.title, m, subject))) return true;
    if (signal === 'rate-spike') return titleCovers(incident.title, 'Forecast', toolset) && incident.title.includes('surged');
    if (signal === 'silence') return titleCovers(incident.title, 'Forecast', toolset) && incident.title.includes('fell silent');
    return false;
  });
}

const topTypes = (t: ToolsetWindow) =>
  t.topEventTypes.length === 0 ? 'no event type recorded' : t.topEventTypes.slice(0, 3).map((x) => `${x.eventType} (${x.count})`).join(', ');

type Seed = Record<PostmortemSection, Claim[]>;

function draftOf(title: string, seed: Seed): PostmortemDraft {
  const sections = {} as Seed;
  for (const key of POSTMORTEM_SECTIONS) sections[key] = seed[key].map((c) => ({ text: c.text, eventIds: c.eventIds.slice(0, CLAIM_IDS_MAX) }));
  return { title: clip(`Postmortem: ${title}`, TEXT_MAX.title), sections };
}

interface Candidate {
  draft: IncidentProposalDraft;
  subject: string;
}

function proposal(
  snapshot: TriageSnapshot,
  fields: { toolset: string; subject: string; severity: IncidentSeverity; signal: Exclude<IncidentSignal, 'other'>; headline: string; summary: string; evidence: readonly string[] },
  seed: (evidence: string[]) => Seed,
): Candidate | null {
  const evidence = uniqueIds(fields.evidence, EVIDENCE_MAX);
  // The type allows no empty evidence; a silence has no event to cite and is the one exception.
  if (evidence.length === 0 && fields.signal !== 'silence') return null;
  if (alreadyOpen(snapshot, fields.toolset, fields.signal, fields.subject)) return null;
  const title = clip(`${SIGNAL_MARKERS[fields.signal]}: ${fields.subject} — ${fields.headline}`, TEXT_MAX.title);
  return {
    subject: fields.subject,
    draft: {
      kind: 'incident',
      toolset: fields.toolset,
      severity: fields.severity,
      signal: fields.signal,
      title,
      summary: fields.summary,
      evidenceEventIds: evidence,
      postmortemDraft: draftOf(title, seed(evidence)),
    },
  };
}

const windowText = (s: TriageSnapshot) => `${s.windowStart} to ${s.windowEnd} (${s.windowMinutes} min)`;

// ——— severities: the rules the built-in engine and the severity policy share ———

/** The forecast's expected events for a window of `windowMinutes` (baselineMean is per hour). */
const expectedIn = (t: ToolsetWindow, windowMinutes: number) => (t.forecast === null ? null : (t.forecast.baselineMean * windowMinutes) / 60);

/** The severity of `t`'s rate spike, or null when it does not spike. */
export function spikeSeverity(t: ToolsetWindow, windowMinutes: number, p: IncidentClassifierParams): IncidentSeverity | null {
  const expected = expectedIn(t, windowMinutes);
  if (expected === null) {
    if (p.unforecastMinEvents === null || t.events < p.unforecastMinEvents || t.events < p.minEvents) return null;
    return t.events >= p.majorSpikeEvents ? 'major' : 'minor';
  }
  if (t.events < p.spikeFactor * expected || t.events < p.minEvents) return null;
  return t.events / Math.max(expected, 1) >= p.majorSpikeFactor || t.events >= p.majorSpikeEvents ? 'major' : 'minor';
}

/** The severity of `t`'s silence, or null when it is not silent against its forecast. */
export function silenceSeverity(t: ToolsetWindow, windowMinutes: number, p: IncidentClassifierParams): IncidentSeverity | null {
  const expected = expectedIn(t, windowMinutes);
  if (expected === null || t.events !== 0 || expected < p.silenceMinExpected) return null;
  return expected >= p.silenceMajorExpected ? 'major' : 'minor';
}

/** The severity of a honeypot tenant's liar flood, or null when it does not flood. */
export function floodSeverity(h: HoneypotWindow, p: IncidentClassifierParams): IncidentSeverity | null {
  if (h.liarEvents < p.liarFloodMin) return null;
  const share = h.events > 0 ? h.liarEvents / h.events : 0;
  return h.tarpitsTriggered.length > 0 || share >= p.liarShareMajor ? 'major' : 'minor';
}

/**
 * The severity policy (docs/triage/README.md, "Severity policy"): the most severe level an incident
 * proposal may carry, from the classifier's own rules applied to the run's input. `critical` is
 * never allowed (one window is not enough to page anyone: an operator escalates). `major` only
 * when the signal's rule makes it major for the proposal's subject: a rate spike or a silence of
 * the proposal's toolset, a liar flood of a honeypot tenant whose LIAR events the proposal cites.
 * Everything else (tarpit, cross-toolset, other, a signal the input does not show) is at most
 * `minor`. `why` says what the input shows, for the rejection reason.
 */
export function severityCeiling(
  snapshot: TriageSnapshot,
  p: IncidentClassifierParams,
  proposal: { toolset: string; signal: string; evidenceEventIds: readonly string[] },
): { max: Exclude<IncidentSeverity, 'critical'>; why: string } {
  const t = snapshot.toolsets.find((x) => x.toolset === proposal.toolset);
  switch (proposal.signal) {
    case 'rate-spike': {
      if (!t) return { max: 'minor', why: `the input has no window of ${proposal.toolset}` };
      const expected = expectedIn(t, snapshot.windowMinutes);
      const shown = expected === null ? `${t.events} events, no forecast` : `${t.events} events against about ${fmt(expected)} expected`;
      return spikeSeverity(t, snapshot.windowMinutes, p) === 'major'
        ? { max: 'major', why: shown }
        : { max: 'minor', why: `${shown}; a spike is major from ${p.majorSpikeFactor}× expected or ${p.majorSpikeEvents} events` };
    }
    case 'silence': {
      if (!t) return { max: 'minor', why: `the input has no window of ${proposal.toolset}` };
      const expected = expectedIn(t, snapshot.windowMinutes);
      const shown = expected === null ? `${t.events} events, no forecast` : `${t.events} events against about ${fmt(expected)} expected`;
      return silenceSeverity(t, snapshot.windowMinutes, p) === 'major'
        ? { max: 'major', why: shown }
        : { max: 'minor', why: `${shown}; a silence is major from ${p.silenceMajorExpected} expected events` };
    }
    case 'liar-flood': {
      const cited = new Set(proposal.evidenceEventIds);
      const tenants = snapshot.honeypot.filter((h) => h.sampleLiarEventIds.some((id) => cited.has(id)));
      return tenants.some((h) => floodSeverity(h, p) === 'major')
        ? { max: 'major', why: 'a major liar flood of a cited tenant' }
        : { max: 'minor', why: `no cited honeypot tenant has a major liar flood (${p.liarFloodMin} LIAR events and a tarpit, or ${fmt(p.liarShareMajor * 100)}% LIAR)` };
    }
    default:
      return { max: 'minor', why: `a ${proposal.signal} proposal is minor by the classifier's rules` };
  }
}

// ——— signals ———

function toolsetSignals(s: TriageSnapshot, p: IncidentClassifierParams): Candidate[] {
  const out: Candidate[] = [];
  for (const t of s.toolsets) {
    const ids = t.sampleEventIds;
    if (t.forecast === null) {
      const severity = spikeSeverity(t, s.windowMinutes, p);
      if (severity === null) continue;
      const summary = `${t.toolset} received ${t.events} events in ${s.windowMinutes} minutes from ${plural(t.tenants, 'tenant')} (mostly ${topTypes(t)}) and has no forecast yet to compare with.`;
      const c = proposal(s, { toolset: t.toolset, subject: t.toolset, severity, signal: 'rate-spike', headline: `${t.events} events in ${s.windowMinutes} min, no forecast`, summary, evidence: ids }, (ev) => ({
        summary: [{ text: summary, eventIds: ev.slice(0, 5) }],
        timeline: [{ text: `Window ${windowText(s)}: ${t.events} events of ${t.toolset}; the newest are cited.`, eventIds: ev }],
        impact: [{ text: `${t.events} events from ${plural(t.tenants, 'tenant')}; top event types: ${topTypes(t)}.`, eventIds: [] }],
        rootCause: [{ text: 'Not yet known: the toolset has no forecast, so it is not known whether this volume is new.', eventIds: [] }],
        actionItems: [
          { text: `Check whether ${t.toolset} is new or was reconfigured, and whether this volume is expected.`, eventIds: [] },
          { text: `Run the forecaster for ${t.toolset} once it has history, and review its alert rules.`, eventIds: [] },
        ],
      }));
      if (c) out.push(c);
      continue;
    }
    const forecast = t.forecast;
    const baseline = forecast.baselineMean;
    const expected = (baseline * s.windowMinutes) / 60;
    const ratio = t.events / Math.max(expected, 1);
    const spike = spikeSeverity(t, s.windowMinutes, p);
    const silence = silenceSeverity(t, s.windowMinutes, p);
    if (spike !== null) {
      const severity = spike;
      const summary = `${t.toolset} received ${t.events} events in ${s.windowMinutes} minutes against about ${fmt(expected)} expected from its forecast baseline of ${fmt(baseline)} an hour (${fmt(ratio)}×). ${plural(t.tenants, 'tenant')}; top event types: ${topTypes(t)}.`;
      const c = proposal(
        s,
        { toolset: t.toolset, subject: t.toolset, severity, signal: 'rate-spike', headline: `${t.events} events in ${s.windowMinutes} min, ${fmt(ratio)}× expected`, summary, evidence: ids },
        (ev) => ({
          summary: [{ text: summary, eventIds: ev.slice(0, 5) }],
          timeline: [
            { text: `Forecast of ${t.toolset} computed at ${forecast.computedAt}: level ${forecast.level}, score ${forecast.score}, recent mean ${fmt(forecast.recentMean)} an hour.`, eventIds: [] },
            { text: `Window ${windowText(s)}: ${t.events} events; the newest are cited.`, eventIds: ev },
          ],
          impact: [{ text: `${t.events} events from ${plural(t.tenants, 'tenant')}; top event types: ${topTypes(t)}.`, eventIds: [] }],
          rootCause: [{ text: 'Not yet known: the spike is measured against the forecast baseline; its source has not been traced.', eventIds: [] }],
          actionItems: [
            { text: `Trace the lineage of the cited ${t.toolset} events to the producer that sent them.`, eventIds: ev.slice(0, 3) },
            { text: `Check the ${plural(t.tenants, 'tenant')} behind the spike and whether the top event type is expected at this volume.`, eventIds: [] },
          ],
        }),
      );
      if (c) out.push(c);
    } else if (silence !== null) {
      const severity = silence;
      const summary = `${t.toolset} sent no events in ${s.windowMinutes} minutes, while its forecast baseline of ${fmt(baseline)} an hour makes about ${fmt(expected)} expected.`;
      const c = proposal(s, { toolset: t.toolset, subject: t.toolset, severity, signal: 'silence', headline: `0 events in ${s.windowMinutes} min, about ${fmt(expected)} expected`, summary, evidence: [] }, () => ({
        summary: [{ text: summary, eventIds: [] }],
        timeline: [
          { text: `Forecast of ${t.toolset} computed at ${forecast.computedAt}: level ${forecast.level}, score ${forecast.score}, recent mean ${fmt(forecast.recentMean)} an hour.`, eventIds: [] },
          { text: `Window ${windowText(s)}: no event received.`, eventIds: [] },
        ],
        impact: [{ text: `About ${fmt(expected)} expected events are missing from ${t.toolset}.`, eventIds: [] }],
        rootCause: [{ text: 'Not yet known: a silent producer, a broken ingest path or a rejected signing key are the usual suspects.', eventIds: [] }],
        actionItems: [
          { text: `Check that ${t.toolset}'s producer is running and its events are admitted (signing key, ingest rejections).`, eventIds: [] },
          { text: `Confirm whether the silence was planned (maintenance) and, if so, note it on the forecast.`, eventIds: [] },
        ],
      }));
      if (c) out.push(c);
    }
  }
  return out;
}

function honeypotSignals(s: TriageSnapshot, p: IncidentClassifierParams): Candidate[] {
  const out: Candidate[] = [];
  for (const h of s.honeypot) {
    const tarpits = h.tarpitsTriggered.length;
    const share = h.events > 0 ? h.liarEvents / h.events : 0;
    const pct = fmt(share * 100);
    const topFp = h.topLiarFingerprints[0];
    const fpText = topFp ? `; top liar fingerprint ${topFp.fingerprintId} (${topFp.liarEvents})` : '';
    const tarpitClaims: Claim[] = h.tarpitsTriggered.slice(0, 6).map((tp) => ({
      text: `${tp.triggeredAt}: tarpit triggered for fingerprint ${tp.fingerprintId} after ${tp.liarEventCount} LIAR events.`,
      eventIds: [],
    }));
    const flood = floodSeverity(h, p);
    if (flood !== null) {
      const severity = flood;
      const summary = `Honeypot tenant ${h.tenant} saw ${h.liarEvents} LIAR events out of ${h.events} (${pct}%) in ${s.windowMinutes} minutes${tarpits > 0 ? `; ${plural(tarpits, 'tarpit')} triggered` : ''}${fpText}.`;
      const c = proposal(
        s,
        { toolset: HONEYPOT_TOOLSET, subject: h.tenant, severity, signal: 'liar-flood', headline: `${h.liarEvents} LIAR events in ${s.windowMinutes} min${tarpits > 0 ? `, ${plural(tarpits, 'tarpit')}` : ''}`, summary, evidence: h.sampleLiarEventIds },
        (ev) => ({
          summary: [{ text: summary, eventIds: ev.slice(0, 5) }],
          timeline: [{ text: `Window ${windowText(s)}: ${h.liarEvents} LIAR events at ${h.tenant}; the newest are cited.`, eventIds: ev }, ...tarpitClaims],
          impact: [
            { text: `${h.liarEvents} of ${h.events} events (${pct}%) came from clients lying about who they are; ${h.topLiarFingerprints.length} fingerprints lead them.`, eventIds: [] },
          ],
          rootCause: [{ text: 'Not yet known: the LIAR clients are identified by fingerprint; who operates them has not been established.', eventIds: [] }],
          actionItems: [
            { text: `Review the top liar fingerprints of ${h.tenant} and whether their tarpits hold.`, eventIds: [] },
            { text: 'Check the clients\' networks (ASN, ja4) for a crawler vendor to report or block.', eventIds: [] },
          ],
        }),
      );
      if (c) out.push(c);
    } else if (tarpits >= p.tarpitMin) {
      const summary = `Honeypot tenant ${h.tenant} triggered ${plural(tarpits, 'tarpit')} in ${s.windowMinutes} minutes (${h.liarEvents} LIAR events of ${h.events})${fpText}.`;
      const c = proposal(s, { toolset: HONEYPOT_TOOLSET, subject: h.tenant, severity: 'minor', signal: 'tarpit', headline: `${plural(tarpits, 'tarpit')} triggered in ${s.windowMinutes} min`, summary, evidence: h.sampleLiarEventIds }, (ev) => ({
        summary: [{ text: summary, eventIds: ev.slice(0, 5) }],
        timeline: [...tarpitClaims, { text: `Window ${windowText(s)}: the LIAR events of ${h.tenant} are cited.`, eventIds: ev }],
        impact: [{ text: `${plural(tarpits, 'fingerprint')} now get${tarpits === 1 ? 's' : ''} delayed responses at ${h.tenant}.`, eventIds: [] }],
        rootCause: [{ text: 'Not yet known: the fingerprints crossed the liar threshold; who runs them has not been established.', eventIds: [] }],
        actionItems: [{ text: `Review the tarpitted fingerprints of ${h.tenant} for a false positive (a verified vendor misclassified).`, eventIds: [] }],
      }));
      if (c) out.push(c);
    }
  }
  return out;
}

function crossToolsetSignals(s: TriageSnapshot, p: IncidentClassifierParams): Candidate[] {
  if (p.crossToolsetMin === null) return [];
  const min = p.crossToolsetMin;
  const out: Candidate[] = [];
  for (const x of s.crossToolset) {
    const toolsets = [...new Set(x.toolsets)].sort(cmp);
    const first = toolsets[0];
    if (first === undefined || toolsets.length < min) continue;
    // The proposal is `first`'s: it names no other toolset (whoever decides it may reach only this one).
    const others = `${first} and ${plural(toolsets.length - 1, 'other toolset')}`;
    const summary = `Tenant ${x.tenant} reached ${toolsets.length} toolsets (${others}) with ${x.events} events in ${s.windowMinutes} minutes.`;
    // Evidence of the proposal's own toolset only: a proposal never cites another toolset's events.
    const evidence = x.sampleEvents.filter((e) => e.toolset === first).map((e) => e.eventId);
    const c = proposal(s, { toolset: first, subject: x.tenant, severity: 'minor', signal: 'cross-toolset', headline: `${toolsets.length} toolsets, ${x.events} events in ${s.windowMinutes} min`, summary, evidence }, (ev) => ({
      summary: [{ text: summary, eventIds: ev.slice(0, 5) }],
      timeline: [{ text: `Window ${windowText(s)}: the newest events of ${x.tenant} in ${first} are cited.`, eventIds: ev }],
      impact: [{ text: `${toolsets.length} toolsets share one source tenant: ${others}.`, eventIds: [] }],
      rootCause: [{ text: 'Not yet known: whether this tenant is one actor probing the fleet or a shared integration.', eventIds: [] }],
      actionItems: [{ text: `Follow ${x.tenant}'s events across the toolsets it reaches and check whether the tenant is expected in all of them.`, eventIds: [] }],
    }));
    if (c) out.push(c);
  }
  return out;
}

/**
 * The built-in engine: pure, so the same snapshot gives the same proposals in the same order
 * (severity, toolset, signal, subject), whatever order the snapshot's lists came in.
 */
export function classifyIncidents(snapshot: TriageSnapshot, params: IncidentClassifierParams): IncidentProposalDraft[] {
  const candidates = [...toolsetSignals(snapshot, params), ...honeypotSignals(snapshot, params), ...crossToolsetSignals(snapshot, params)];
  candidates.sort(
    (a, b) =>
      SEVERITY_RANK[a.draft.severity] - SEVERITY_RANK[b.draft.severity] ||
      cmp(a.draft.toolset, b.draft.toolset) ||
      SIGNAL_ORDER.indexOf(a.draft.signal) - SIGNAL_ORDER.indexOf(b.draft.signal) ||
      cmp(a.subject, b.subject) ||
      cmp(a.draft.title, b.draft.title),
  );
  return candidates.slice(0, Math.max(0, params.maxProposals)).map((c) => c.draft);
}
