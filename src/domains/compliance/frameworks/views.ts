import type { Outcome, Severity } from './catalogue.ts';

/** A control with its latest outcome in force (spec B `compliance/frameworks/{framework}`). */
export interface ControlView {
  /** `<framework>/<controlId>`. */
  id: string;
  controlId: string;
  category: string;
  title: string;
  description: string;
  predicateKey: string;
  severity: Severity;
  latestOutcome: Outcome | null;
  latestRunAt: string | null;
  latestSummary: string | null;
  latestEvaluationId: string | null;
  /** `job`, or `operator:<userId>` while an override is in force. */
  latestEvaluatedBy: string | null;
  latestEvidenceUrl: string | null;
}

export interface FrameworkView {
  framework: string;
  title: string;
  version: string;
  status: string;
  controls: ControlView[];
}

export const BADGES = ['green', 'manual-review', 'red', 'unknown', 'yellow'] as const;
export type Badge = (typeof BADGES)[number];

/** One framework's posture (spec B `compliance/posture`). */
export interface PostureView {
  framework: string;
  title: string;
  version: string;
  totalControls: number;
  passing: number;
  failing: number;
  manualReview: number;
  nA: number;
  /** The newest latestRunAt among its controls; null before the first evaluation. */
  asOf: string | null;
  badge: Badge;
  /** passing / (totalControls − nA) in percent, one decimal; null when that is 0. */
  ratePct: number | null;
}

/** What the bundles and the narrator read (frameworks/service.ts implements it). */
export interface ComplianceReads {
  /** 404 `not-found` for an unknown framework. */
  framework(key: string): Promise<FrameworkView>;
  posture(): Promise<PostureView[]>;
  /**
   * Every control of every shipped framework with its outcome in force (null before its first
   * evaluation), without times: what the federation's compliance digest is taken over.
   */
  outcomesInForce(): Promise<{ framework: string; controlId: string; outcome: Outcome | null }[]>;
}
