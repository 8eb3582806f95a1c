import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import type { IngestService } from './service.ts';

export function ingestJobs(ingest: IngestService): JobDefinition[] {
  return [
    {
      name: 'tarpit-expire',
      description: 'Ends tarpits whose expiry has passed, so their fingerprints are served without delay again.',
      schedule: '* * * * *',
      async run({ now }) {
        return { expired: await ingest.expireTarpits(now) };
      },
    },
    {
      name: 'ingest-sample-prune',
      description: 'Deletes honeypot ingest samples older than 8 days: the ingest SLO reads at most the last 7.',
      schedule: '20 3 * * *',
      async run({ now }) {
        return { deleted: await ingest.pruneSamples(now) };
      },
    },
  ];
}
