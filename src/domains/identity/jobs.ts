import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import type { PasskeyService } from './passkeys/service.ts';
import type { IdentityService } from './tokens/service.ts';

export function identityJobs(deps: { tokens: Pick<IdentityService, 'sweepExpiredSessions'>; passkeys: Pick<PasskeyService, 'sweepExpiredChallenges'> }): JobDefinition[] {
  return [
    {
      name: 'session-sweep',
      description: 'Deletes expired operator sessions and WebAuthn challenges.',
      schedule: '17 * * * *',
      async run({ now }) {
        const sessionsDeleted = await deps.tokens.sweepExpiredSessions(now);
        const challengesDeleted = await deps.passkeys.sweepExpiredChallenges(now);
        return { sessionsDeleted, challengesDeleted };
      },
    },
  ];
}
