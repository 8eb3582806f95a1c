import { describe, expect, it } from 'vitest';
import { type TargetCatalogue, targetProblem } from './targets.ts';

/** What each kind's target may name (docs/chaos/README.md, "Kinds and targets"), over a catalogue given here. */

const known: TargetCatalogue = {
  endpointIds: ['searchTopics', 'getHealth'],
  jobs: [
    { name: 'session-sweep', schedule: '17 * * * *' },
    { name: 'honeypot-rollup-rebuild', schedule: null },
    { name: 'chaos-schedule', schedule: '*/5 * * * *' },
  ],
  flagNames: ['agent-api-feed-cache'],
};
const ok = (kind: Parameters<typeof targetProblem>[0], target: string) => expect(targetProblem(kind, target, known), `${kind} ${target}`).toBeNull();
const refused = (kind: Parameters<typeof targetProblem>[0], target: string, says: RegExp) => expect(targetProblem(kind, target, known), `${kind} ${target}`).toMatch(says);

describe('targetProblem', () => {
  it('synthetic-latency: an endpoint id or a path prefix starting with /', () => {
    ok('synthetic-latency', 'searchTopics');
    ok('synthetic-latency', '/api/observatory/v1/agent-api/');
    refused('synthetic-latency', 'searchtopics', /neither an endpoint id of the registry nor a path prefix/);
    refused('synthetic-latency', 'api/agent', /nor a path prefix starting with \//);
  });

  it('cron-skip-one: a scheduled job, never the chaos schedule itself', () => {
    ok('cron-skip-one', 'session-sweep');
    refused('cron-skip-one', 'no-such-job', /There is no job named no-such-job/);
    refused('cron-skip-one', 'honeypot-rollup-rebuild', /runs only on demand/);
    refused('cron-skip-one', 'chaos-schedule', /cannot skip its own run/);
    // Refused by name even where the scheduler does not list it.
    expect(targetProblem('cron-skip-one', 'chaos-schedule', { ...known, jobs: [] })).toMatch(/cannot skip its own run/);
  });

  it('feature-flag-flip: a runtime flag the deployment defines', () => {
    ok('feature-flag-flip', 'agent-api-feed-cache');
    refused('feature-flag-flip', 'no-such-flag', /There is no runtime flag named no-such-flag/);
    expect(targetProblem('feature-flag-flip', 'agent-api-feed-cache', { ...known, flagNames: [] })).toMatch(/no runtime flag/);
  });

  it('prisma-readonly-window: the primary database only', () => {
    ok('prisma-readonly-window', 'primary');
    refused('prisma-readonly-window', 'replica', /must be primary/);
    refused('prisma-readonly-window', 'Primary', /must be primary/);
  });

  it('bridge-token-rotate-rehearsal: a region key or * for every peer', () => {
    ok('bridge-token-rotate-rehearsal', '*');
    ok('bridge-token-rotate-rehearsal', 'eu-west');
    ok('bridge-token-rotate-rehearsal', '1');
    refused('bridge-token-rotate-rehearsal', 'EU West', /not a region key/);
    refused('bridge-token-rotate-rehearsal', '-eu', /not a region key/);
    refused('bridge-token-rotate-rehearsal', 'a'.repeat(65), /not a region key/);
  });
});
