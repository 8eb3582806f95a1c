import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import type { DriftService } from './service.ts';

/** Every 5 minutes (spec C Limits, "Drift auto-open job"; D5 `drift-auto-open`). */
export const DRIFT_AUTO_OPEN_SCHEDULE = '*/5 * * * *';
/** Every 5 minutes, 2 minutes after the scan (D5 `drift-remediate`): the two never start together. */
export const DRIFT_REMEDIATE_SCHEDULE = '2-59/5 * * * *';

export function driftJobs(drift: DriftService): JobDefinition[] {
  return [
    {
      name: 'drift-auto-open',
      description:
        'Runs the five drift detectors and opens a trust drift event for each breach whose (kind, source, sourceId) slot holds no open or acknowledged event; an unchanged system opens nothing. A detector that failed is named in the run\'s error (the others\' events are opened).',
      schedule: DRIFT_AUTO_OPEN_SCHEDULE,
      async run() {
        const scan = await drift.autoOpen({ job: true });
        if (scan.detectorErrors.length > 0) {
          throw new Error(`opened ${scan.openedNow.length} drift event(s); detector(s) failed: ${scan.detectorErrors.map((e) => `${e.detector} (${e.error})`).join(', ')}`);
        }
        return { openedNow: scan.openedNow.length, alreadyOpen: scan.alreadyOpen, acceptedWontFix: scan.acceptedWontFix };
      },
    },
    {
      name: 'drift-remediate',
      description:
        'Runs the five drift detectors again and marks auto-resolved (resolvedBy job, notes saying what cleared) every open or acknowledged drift event whose slot no longer breaches; a detector that failed leaves its kind alone and is named in the run\'s error.',
      schedule: DRIFT_REMEDIATE_SCHEDULE,
      async run() {
        const pass = await drift.remediate();
        if (pass.detectorErrors.length > 0) {
          throw new Error(`auto-resolved ${pass.autoResolved.length} drift event(s); detector(s) failed, their kinds left alone: ${pass.detectorErrors.map((e) => `${e.detector} (${e.error})`).join(', ')}`);
        }
        return { autoResolved: pass.autoResolved.length, stillBreaching: pass.stillBreaching, clearedWontFix: pass.clearedWontFix };
      },
    },
  ];
}
