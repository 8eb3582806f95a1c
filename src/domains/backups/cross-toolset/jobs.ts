import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import type { CrossToolsetService } from './service.ts';

/** Daily, after the nightly snapshot (02:30) and its verification (03:30) on every deployment. */
export const CROSS_TOOLSET_SCHEDULE = '0 5 * * *';

export function crossToolsetJobs(crossToolset: CrossToolsetService): JobDefinition[] {
  return [
    {
      name: 'backup-cross-toolset-verify',
      description:
        "Asks every registered toolset's bridge verify endpoint whether its newest snapshot restores (each at most once per OBSERVATORY_BRIDGE_MIN_INTERVAL_SEC) and stores the rows GET {v1}/backups/cross-toolset shows.",
      schedule: CROSS_TOOLSET_SCHEDULE,
      async run() {
        // The run is ok whatever the toolsets answered: their outcomes are the rows (and the stats).
        const result = await crossToolset.verify(null, null);
        return { asked: result.asked.length, throttled: result.throttled.length, ...result.counts };
      },
    },
  ];
}
