import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import type { EmpireIngest } from './service.ts';

export function ingestJobs(ingest: Pick<EmpireIngest, 'pruneSamples'>): JobDefinition[] {
  return [
    {
      name: 'empire-sample-prune',
      description: 'Deletes empire ingest samples older than 8 days: the empire SLO reads at most the last 7.',
      schedule: '25 3 * * *',
      async run({ now }) {
        return { deleted: await ingest.pruneSamples(now) };
      },
    },
  ];
}
