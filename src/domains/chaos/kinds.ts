import type { FaultCategory } from '../../platform/faults/index.ts';

/**
 * The five experiment kinds (spec A "Chaos experiment"), each in a category: the category is the
 * experiment's blast radius (what OBSERVATORY_CHAOS_ALLOW lists), and it holds the recovery
 * objective's default and cap and the length of the injection window. docs/chaos/README.md has the table.
 */
export const CHAOS_KINDS = [
  'synthetic-latency',
  'bridge-token-rotate-rehearsal',
  'cron-skip-one',
  'feature-flag-flip',
  'prisma-readonly-window',
] as const;
export type ChaosKind = (typeof CHAOS_KINDS)[number];

export type ChaosCategory = FaultCategory;

export interface KindRules {
  category: ChaosCategory;
  /** recoverySloSec when registration names none. */
  defaultRecoverySloSec: number;
  /** The category's maximum window: recoverySloSec is capped here, and no injection lasts longer. */
  maxWindowSec: number;
  /** How long the fault is held before it is undone (cron-skip-one: at most this long waiting for the job's next run). */
  windowSec: number;
  /** What `target` names, for the docs and refusals. */
  targetMeans: string;
}

export const KIND_RULES: Record<ChaosKind, KindRules> = {
  'synthetic-latency': {
    category: 'http',
    defaultRecoverySloSec: 30,
    maxWindowSec: 300,
    windowSec: 30,
    targetMeans: 'an endpoint id (searchTopics) or a path prefix starting with / (/v1/agent-api/)',
  },
  'bridge-token-rotate-rehearsal': {
    category: 'bridge',
    defaultRecoverySloSec: 60,
    maxWindowSec: 300,
    windowSec: 30,
    targetMeans: 'a region key, or * for every active peer region',
  },
  'cron-skip-one': {
    category: 'scheduler',
    defaultRecoverySloSec: 900,
    maxWindowSec: 3600,
    windowSec: 3600,
    targetMeans: 'the name of a scheduled job (as in GET /v1/ops/cron-health)',
  },
  'feature-flag-flip': {
    category: 'flags',
    defaultRecoverySloSec: 30,
    maxWindowSec: 300,
    windowSec: 60,
    targetMeans: 'a runtime flag name (docs/chaos/README.md, "Runtime flags")',
  },
  'prisma-readonly-window': {
    category: 'database',
    defaultRecoverySloSec: 30,
    maxWindowSec: 120,
    windowSec: 20,
    targetMeans: 'the database: primary',
  },
};

/** What OBSERVATORY_CHAOS_ALLOW lets run: `*` for every category, else the listed ones. */
export function blastRadiusAllowed(allow: readonly string[], blastRadius: string): boolean {
  return allow.includes('*') || allow.includes(blastRadius);
}
