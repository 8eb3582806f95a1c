import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import type { IdentityService } from './service.ts';

export function identityJobs(identity: IdentityService): JobDefinition[] {
  return [
    {
      name: 'session-sweep',
      description: 'Deletes expired operator sessions and WebAuthn challenges.',
      schedule: '17 * * * *',
      async run({ now }) {
        const deleted = await identity.sweepExpired(now);
        return { sessionsDeleted: deleted.sessions, challengesDeleted: deleted.challenges };
      },
    },
  ];
}
