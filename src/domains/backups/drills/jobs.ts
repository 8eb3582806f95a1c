import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import type { DrillService } from './service.ts';

/** Spec C, Limits: weekly on Monday 04:00 UTC. */
export const DRILL_SCHEDULE = '0 4 * * 1';

export function drillJobs(drills: DrillService): JobDefinition[] {
  return [
    {
      name: 'region-failover-drill',
      description:
        "Rehearses losing this deployment's region: restores the newest snapshot into a scratch database, measures recovery time and the data-loss window, checks a live write. Refused (stats skipped) while an unresolved error drill of the last 24 hours exists.",
      schedule: DRILL_SCHEDULE,
      async run({ trigger }) {
        // The run is `ok` whatever the drill measured: the drill's own outcome is in the stats and the drill list.
        const result = await drills.run({ trigger, ctx: null });
        if (result.skipped) return { skipped: true, skipReason: result.skipReason };
        const drill = result.drill!;
        return {
          skipped: false,
          drillId: drill.id,
          outcome: drill.outcome,
          observedBadge: drill.observedBadge,
          recoverySec: drill.recoverySec,
          dataLossWindowSec: drill.dataLossWindowSec,
        };
      },
    },
  ];
}
