import type { Clock } from '../../../platform/clock.ts';
import { checkDayRange, dayNumber, dayOf } from '../../../platform/days.ts';
import { badRequest } from '../../../platform/errors.ts';
import { assertSpansNoToolset, toolsetReach } from '../../../platform/http/auth.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import type { IncidentService } from '../../empire/index.ts';
import type { IdentityService } from '../../identity/index.ts';
import type { PostmortemService } from '../../triage/index.ts';
import { type CohortBucket, cohortBuckets, COHORT_DAYS, type CohortMember, type FollowMode } from './compute.ts';

/**
 * The analytics cohorts (spec B group 4 `GET analytics/cohort`; docs/analytics/cohorts.md): a
 * cohort is the members whose anchor event falls on a UTC day of [from, to); bucket k (0..7)
 * counts those whose day anchorDay + k has begun (`eligible`) and, of them, those the follow event
 * retains on that day. The members and their follow events are read through the owning domains'
 * services (identity, empire incidents, triage postmortems); the arithmetic is compute.ts.
 */

/** The longest `from`..`to` range, in days: a year, leap day included. */
export const COHORT_RANGE_MAX_DAYS = 366;
const DAY_MS = 86_400_000;

interface CohortDefinition {
  anchorLabel: string;
  followLabel: string;
  mode: FollowMode;
  /** A token bound to toolsets may read it (only its toolsets' members). */
  toolsetData: boolean;
}

export const COHORTS = {
  'developer-token-7d': { anchorLabel: 'API token created', followLabel: 'token authenticated a request that day', mode: 'each-day', toolsetData: false },
  'incident-postmortem-7d': { anchorLabel: 'empire incident opened', followLabel: 'incident has a postmortem', mode: 'cumulative', toolsetData: true },
} as const satisfies Record<string, CohortDefinition>;

export type CohortKey = keyof typeof COHORTS;
export const COHORT_KEYS = Object.keys(COHORTS).sort() as CohortKey[];

export function isCohortKey(key: string): key is CohortKey {
  return Object.hasOwn(COHORTS, key);
}

export interface CohortAnswer {
  key: CohortKey;
  anchorLabel: string;
  followLabel: string;
  from: string;
  to: string;
  cohortSize: number;
  buckets: CohortBucket[];
}

export function createCohortService(deps: {
  clock: Clock;
  identity: Pick<IdentityService, 'tokensCreatedWithActivity'>;
  empire: { incidents: Pick<IncidentService, 'openedBetween'> };
  triage: { postmortems: Pick<PostmortemService, 'firstWrittenAt'> };
}) {
  const { clock, identity, empire, triage } = deps;

  /** Tokens created in [from, to), each with the days (of its 8) it authenticated a request on. */
  async function tokenMembers(from: Date, to: Date): Promise<CohortMember[]> {
    const tokens = await identity.tokensCreatedWithActivity({ from, to, followDays: COHORT_DAYS - 1 });
    return tokens.map((t) => ({ anchorDay: dayOf(t.createdAt), followDays: t.activeDays.map((d) => dayNumber(d)!) }));
  }

  /** Incidents opened in [from, to) (only the principal's toolsets' when it is bound), each with the day its postmortem was first written. */
  async function incidentMembers(principal: Principal, from: Date, to: Date): Promise<CohortMember[]> {
    const incidents = await empire.incidents.openedBetween(from, to, toolsetReach(principal));
    const firstWritten = await triage.postmortems.firstWrittenAt(incidents.map((i) => i.id));
    return incidents.map((i) => {
      const at = firstWritten.get(i.id);
      return { anchorDay: dayOf(i.openedAt), followDays: at === undefined ? [] : [dayOf(at)] };
    });
  }

  return {
    /** B `GET analytics/cohort`. */
    async read(principal: Principal, query: { key: string; from: string; to: string }): Promise<CohortAnswer> {
      const { key } = query;
      if (!isCohortKey(key)) {
        throw badRequest('unknown-cohort', `There is no cohort ${JSON.stringify(key.slice(0, 64))}; the registered cohorts are ${COHORT_KEYS.join(', ')}.`, { field: 'query.key' });
      }
      const definition: CohortDefinition = COHORTS[key];
      // Every operator's API tokens, bound to any toolsets or none: no toolset's share can be told apart.
      if (!definition.toolsetData) assertSpansNoToolset(principal, `cohort ${key}, which counts every API token,`);
      const range = checkDayRange(query.from, query.to, COHORT_RANGE_MAX_DAYS);
      const from = new Date(range.from * DAY_MS);
      const to = new Date(range.to * DAY_MS);
      const today = dayOf(clock.now());
      const members = key === 'developer-token-7d' ? await tokenMembers(from, to) : await incidentMembers(principal, from, to);
      const { cohortSize, buckets } = cohortBuckets(members, definition.mode, today);
      return { key, anchorLabel: definition.anchorLabel, followLabel: definition.followLabel, from: query.from, to: query.to, cohortSize, buckets };
    },
  };
}

export type CohortService = ReturnType<typeof createCohortService>;
