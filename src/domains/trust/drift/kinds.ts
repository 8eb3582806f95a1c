/**
 * The vocabulary of the drift inbox (spec A "Trust drift event"; docs/federation/README.md, "Drift inbox
 * and detectors"): kinds, severities, statuses, and what a detector reports.
 */

export const DRIFT_KINDS = ['graph-drift', 'replay-drift', 'region-parity', 'compliance-fail', 'integrity-mismatch'] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];

export const DRIFT_SEVERITIES = ['critical', 'major', 'minor'] as const;
export type DriftSeverity = (typeof DRIFT_SEVERITIES)[number];

export const DRIFT_STATUSES = ['open', 'acknowledged', 'resolved', 'auto-resolved', 'wont-fix'] as const;
export type DriftStatus = (typeof DRIFT_STATUSES)[number];
/** The statuses that hold a slot: a breach whose slot holds one of these opens nothing. */
export const HELD_STATUSES = ['open', 'acknowledged'] as const satisfies readonly DriftStatus[];
/** The body statuses of resolve. */
export const RESOLVE_STATUSES = ['resolved', 'auto-resolved', 'wont-fix'] as const satisfies readonly DriftStatus[];
export type ResolveStatus = (typeof RESOLVE_STATUSES)[number];
export const LIST_STATUSES = [...DRIFT_STATUSES, 'all'] as const;
export type ListStatus = (typeof LIST_STATUSES)[number];

/** One thing a detector found wrong now. (kind, source, sourceId) is its slot: the same drift maps to the same slot on every scan. */
export interface Breach {
  source: string;
  sourceId: string;
  severity: DriftSeverity;
  description: string;
  payload: Record<string, unknown>;
}

/** A slot an open or acknowledged event holds, as detectors are told of it (to re-check subjects that left their window). */
export interface HeldSlot {
  kind: DriftKind;
  source: string;
  sourceId: string;
}

export interface DetectorContext {
  now: Date;
  /** The slots of this detector's kind held by open or acknowledged events (at most HELD_MAX). */
  held: readonly HeldSlot[];
}

export interface Detector {
  kind: DriftKind;
  /** Every breach now; throws when it cannot tell (the error is reported, the kind left alone). */
  scan(ctx: DetectorContext): Promise<Breach[]>;
}

export const slotKey = (s: { kind: string; source: string; sourceId: string }) => `${s.kind}\u0000${s.source}\u0000${s.sourceId}`;
