/**
 * What the triage agents read and write (docs/triage/README.md). Each agent gets one snapshot: the data
 * of its window, read by the triage repository and written into the user message as canonical
 * JSON. The live model and the built-in engine read the same snapshot and answer in the same shape
 * (`{"proposals": [...]}` or a postmortem draft), which the pipeline then parses and validates.
 * Event ids are the `eventId`s of the stores (uuid): empire events and honeypot events.
 */

export type IncidentSeverity = 'critical' | 'major' | 'minor';

/** Severities in order, most severe first (0). */
export const SEVERITY_RANK: Readonly<Record<IncidentSeverity, number>> = { critical: 0, major: 1, minor: 2 };

/** One toolset's activity in the window, beside what the forecaster expects of it. */
export interface ToolsetWindow {
  toolset: string;
  /** Empire events received in the window. */
  events: number;
  /** Distinct source tenants among them. */
  tenants: number;
  /** The most frequent event types, most first then by name (at most 5). */
  topEventTypes: { eventType: string; count: number }[];
  /** Up to 20 event ids of the window, newest first (evidence). */
  sampleEventIds: string[];
  /** The latest forecaster row of the toolset, or null when it has none. */
  forecast: { score: number; level: 'none' | 'watch' | 'alert'; baselineMean: number; recentMean: number; computedAt: string } | null;
}

/** One honeypot tenant's LIAR activity in the window. */
export interface HoneypotWindow {
  tenant: string;
  events: number;
  liarEvents: number;
  /** Fingerprints with the most LIAR events, most first then by id (at most 5). */
  topLiarFingerprints: { fingerprintId: string; liarEvents: number }[];
  /** Tarpits triggered in the window, newest first (at most 10). */
  tarpitsTriggered: { fingerprintId: string; triggeredAt: string; liarEventCount: number }[];
  /** Up to 20 LIAR event ids of the window, newest first (evidence). */
  sampleLiarEventIds: string[];
}

/** A source tenant whose events reached two or more toolsets in the window. */
export interface CrossToolsetWindow {
  tenant: string;
  toolsets: string[];
  events: number;
  /**
   * The tenant's newest events of the window, up to 5 of each toolset, by toolset then newest
   * first: each names its toolset, since a proposal may cite only events of its own toolset.
   */
  sampleEvents: { eventId: string; toolset: string }[];
}

/** The incident classifier's input: one window of the fleet. */
export interface TriageSnapshot {
  windowStart: string;
  windowEnd: string;
  windowMinutes: number;
  /** Every toolset with events in the window or with a forecast (a silent toolset has events 0), by name. */
  toolsets: ToolsetWindow[];
  /** Every honeypot tenant with events in the window, by slug. */
  honeypot: HoneypotWindow[];
  /** Most events first then by tenant (at most 10). */
  crossToolset: CrossToolsetWindow[];
  /** Incidents open or acknowledged now, so nothing is proposed twice (at most 50, newest first). */
  openIncidents: { id: string; toolset: string; title: string; source: string }[];
}

/** A postmortem claim: one sentence and the event ids it rests on. */
export interface Claim {
  text: string;
  eventIds: string[];
}

export const POSTMORTEM_SECTIONS = ['summary', 'timeline', 'impact', 'rootCause', 'actionItems'] as const;
export type PostmortemSection = (typeof POSTMORTEM_SECTIONS)[number];

/** The five-section postmortem every writer returns (the model, the built-in engine). */
export interface PostmortemDraft {
  title: string;
  sections: Record<PostmortemSection, Claim[]>;
}

export type IncidentSignal = 'rate-spike' | 'silence' | 'liar-flood' | 'tarpit' | 'cross-toolset' | 'other';

/** What the incident classifier proposes: an incident to open. */
export interface IncidentProposalDraft {
  kind: 'incident';
  /** The toolset it concerns; `honeypot` for the honeypot fleet's own signals. */
  toolset: string;
  severity: IncidentSeverity;
  signal: IncidentSignal;
  title: string;
  summary: string;
  /** 1 to 50 event ids of the window. */
  evidenceEventIds: string[];
  /** A seed for the incident's postmortem, when the agent wrote one. */
  postmortemDraft?: PostmortemDraft | undefined;
}

/** The fixed-shape filter set of a saved view (every member present; null means "any"). */
export interface ViewFilters {
  toolset: string | null;
  tenant: string | null;
  eventType: string | null;
  uaClass: string | null;
  fingerprintId: string | null;
  /** An event whose lineage (causedBy both ways) the view follows. */
  focalEventId: string | null;
  from: string;
  to: string;
}

export interface InvestigationProposalDraft {
  kind: 'investigation';
  toolset: string;
  name: string;
  /** Exactly three bullets. */
  rationale: [string, string, string];
  filters: ViewFilters;
  evidenceEventIds: string[];
}

/** The investigation proposer's input. */
export interface InvestigationSnapshot extends TriageSnapshot {
  /** The event the operator asked about, with its lineage, or null for cluster-level proposals. */
  focal: {
    eventId: string;
    toolset: string;
    eventType: string;
    tenant: string | null;
    ts: string;
    upstream: { eventId: string; toolset: string; eventType: string; ts: string }[];
    downstream: { eventId: string; toolset: string; eventType: string; ts: string }[];
  } | null;
  /** Honeypot fingerprint clusters of the window (ja4, uaClass, asn), most events first (at most 10). */
  clusters: { ja4: string | null; uaClass: string; asn: number | null; tenant: string; events: number; fingerprints: number; sampleEventIds: string[] }[];
}

/** Hourly empire event counts of one toolset over the lookback, oldest first, for candidate rules. */
export interface ToolsetHistory {
  toolset: string;
  /** `hours.length` = lookbackDays × 24; hours[i] counts events received in hour `from + i`. */
  hours: number[];
}

/** A resolved incident of the lookback (the backtest's ground truth). */
export interface ResolvedIncident {
  id: string;
  toolset: string;
  openedAt: string;
  resolvedAt: string;
  severity: IncidentSeverity;
}

/** One past operator decision on a rule proposal, fed back as an example. */
export interface RuleExample {
  toolset: string;
  predicate: Record<string, unknown>;
  decision: 'accepted' | 'rejected';
  notes: string | null;
}

/** The rule proposer's input. */
export interface RuleSnapshot {
  lookbackDays: number;
  /** Start of the first hour of `history` (an hour boundary) and end of the last. */
  from: string;
  to: string;
  history: ToolsetHistory[];
  resolvedIncidents: ResolvedIncident[];
  /** At most 10 accepted and 10 rejected, newest first. */
  examples: RuleExample[];
  /** Predicates of the enabled alert rules that exist already, by toolset. */
  existingRules: { toolset: string; predicate: Record<string, unknown> }[];
}

export interface RuleProposalDraft {
  kind: 'alert-rule';
  toolset: string;
  name: string;
  /** An empire alert predicate (docs/empire/alerts.md); checked against the union before storing. */
  predicate: Record<string, unknown>;
  rationale: string;
}

/** What the backtest of a rule found over the lookback (docs/triage/README.md, "Backtest"). */
export interface Backtest {
  /**
   * `hourly-count`: an `empire_count_gte` rule replayed over the toolset's hourly counts;
   * `unsupported`: a predicate the hourly history cannot replay (every count is 0).
   */
  method: 'hourly-count' | 'unsupported';
  lookbackDays: number;
  /** Firings followed by (or inside) a resolved incident of the toolset. */
  TP: number;
  /** Firings with no incident. */
  FP: number;
  /** Mean of (incident opened − first firing before it) over the incidents caught early; 0 when none. */
  meanLeadTimeSec: number;
  /** Resolved incidents of the toolset in the lookback, and how many a firing caught. */
  incidents: number;
  caught: number;
  /** Hours in which the rule would have fired. */
  firings: number;
}

/** The postmortem writer's input: one incident and the events of its lineage. */
export interface PostmortemSnapshot {
  incident: { id: string; toolset: string; severity: IncidentSeverity; title: string; status: string; source: string; openedAt: string; resolvedAt: string | null };
  /** The incident's events and every event of their lineage (causedBy both ways), oldest first (at most 200). */
  lineage: { eventId: string; toolset: string; eventType: string; tenant: string | null; ts: string; causedBy: string | null }[];
  operatorNotes: string | null;
}

/** The toolset name triage gives honeypot facts (honeypot events belong to no toolset of the empire). */
export const HONEYPOT_TOOLSET = 'honeypot';

export type ComplianceOutcome = 'pass' | 'fail' | 'manual-review' | 'n/a';

/** One control of a framework in the compliance narrator's input. */
export interface NarratorControl {
  controlId: string;
  title: string;
  severity: IncidentSeverity;
  /** The latest outcome in force; null before the control's first evaluation. */
  outcome: ComplianceOutcome | null;
  /** The latest evaluation's summary; null before the first. */
  summary: string | null;
  /** Whether that outcome is an operator's override rather than the job's evaluation. */
  override: boolean;
}

/** The compliance narrator's input: each framework's posture and every control's latest outcome. */
export interface ComplianceSnapshot {
  frameworks: {
    framework: string;
    title: string;
    version: string;
    totalControls: number;
    passing: number;
    failing: number;
    manualReview: number;
    nA: number;
    asOf: string | null;
    badge: string;
    ratePct: number | null;
    /** In the framework's own order. */
    controls: NarratorControl[];
  }[];
}

/** What the compliance narrator answers: one paragraph of plain text. */
export interface Narration {
  paragraph: string;
}
