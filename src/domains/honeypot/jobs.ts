import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import type { IngestService } from './ingest.ts';

export function honeypotJobs(ingest: IngestService): JobDefinition[] {
  return [
    {
      name: 'tarpit-expire',
      description: 'Ends tarpits whose expiry has passed, so their fingerprints are served without delay again.',
      schedule: '* * * * *',
      async run({ now }) {
        return { expired: await ingest.expireTarpits(now) };
      },
    },
  ];
}
