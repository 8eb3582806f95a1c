import { V1 } from '../../../platform/http/registry.ts';
import type { ChaosKind } from '../kinds.ts';

/**
 * Whether an experiment's `target` names a thing its kind can act on (docs/chaos/README.md, "Kinds and
 * targets"), checked at registration so a typo is refused then rather than found by a run. Pure:
 * what exists (endpoint ids, scheduled jobs, runtime flags) is passed in.
 */

/** The things targets may name, as this deployment has them. */
export interface TargetCatalogue {
  /** Endpoint ids of the registry (`searchTopics`). */
  endpointIds: readonly string[];
  /** The scheduler's jobs; only those with a schedule have a next run to skip. */
  jobs: readonly { name: string; schedule: string | null }[];
  /** The documented runtime flags. */
  flagNames: readonly string[];
}

/** The job that starts chaos runs: skipping its own next run would be the experiment disabling itself. */
export const CHAOS_SCHEDULE_JOB = 'chaos-schedule';
/** The only database a read-only window acts on: this deployment's own. */
export const PRIMARY_DATABASE = 'primary';
/** A region key (as federation's region registry spells them), or `*` for every active peer region. */
const REGION_KEY = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** Why `target` names nothing `kind` can act on, or null when it does. */
export function targetProblem(kind: ChaosKind, target: string, known: TargetCatalogue): string | null {
  switch (kind) {
    case 'synthetic-latency':
      if (target.startsWith('/') || known.endpointIds.includes(target)) return null;
      return `${target} is neither an endpoint id of the registry nor a path prefix starting with /.`;
    case 'cron-skip-one': {
      if (target === CHAOS_SCHEDULE_JOB) return `${CHAOS_SCHEDULE_JOB} cannot skip its own run: it is the job that starts chaos runs.`;
      const job = known.jobs.find((j) => j.name === target);
      if (job === undefined) return `There is no job named ${target} (GET ${V1}/honeypot/ops/cron-health lists them).`;
      if (job.schedule === null) return `The job ${target} runs only on demand: it has no scheduled run to skip.`;
      return null;
    }
    case 'feature-flag-flip':
      return known.flagNames.includes(target) ? null : `There is no runtime flag named ${target} (docs/chaos/README.md, "Runtime flags").`;
    case 'prisma-readonly-window':
      return target === PRIMARY_DATABASE ? null : `A read-only window acts on this deployment's database only: the target must be ${PRIMARY_DATABASE}.`;
    case 'bridge-token-rotate-rehearsal':
      return target === '*' || REGION_KEY.test(target) ? null : `${target} is not a region key (1 to 64 of a-z, 0-9 and -, starting with a letter or digit) nor * for every active peer region.`;
  }
}
