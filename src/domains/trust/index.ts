/**
 * What other domains may use of trust (docs/federation/README.md, "Drift inbox and detectors"): the drift
 * inbox's counts. The trust snapshot reads them for its drift dimension and `driftEvents24h`;
 * compliance reads open critical drift (control no-open-critical-drift); the chaos schedule pauses
 * on open critical drift.
 */
export type { DriftCounts } from './drift/service.ts';
export type { DriftKind, DriftSeverity, DriftStatus } from './drift/kinds.ts';
export type { TrustReads } from './reads.ts';
