import { Type } from '@sinclair/typebox';
import { DayParam, defineEndpoint, type Endpoint, type Principal, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { COHORT_DAYS } from './compute.ts';
import { COHORT_KEYS, COHORT_RANGE_MAX_DAYS, type CohortService } from './service.ts';

/** The analytics cohorts (spec B group 4 `GET analytics/cohort`; docs/analytics/cohorts.md). */

const generatedAt = '2026-11-26T08:00:00.000Z';

const Bucket = Type.Object({
  day: Type.Integer({ minimum: 0, maximum: COHORT_DAYS - 1, description: 'UTC calendar days after each member\'s own anchor day; 0 is the anchor day itself.' }),
  eligible: Type.Integer({ minimum: 0, description: 'Members whose day anchorDay + day has begun (UTC, as of now).' }),
  retained: Type.Integer({ minimum: 0, description: 'Eligible members the follow event retains on that day.' }),
  pct: Type.Number({ minimum: 0, maximum: 1, description: 'retained / eligible as a fraction, rounded to 4 decimals; 0 when eligible is 0.' }),
});

export function analyticsCohortEndpoints(service: CohortService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'readAnalyticsCohort',
      title: 'Analytics cohort',
      description:
        `A retention cohort over UTC calendar days (docs/analytics/cohorts.md). \`from\` and \`to\` are days YYYY-MM-DD, \`to\` exclusive, at most ${COHORT_RANGE_MAX_DAYS} days apart. ` +
        'The cohort is the members whose anchor event falls on a UTC day of [from, to); `cohortSize` counts them. ' +
        `\`buckets\` always holds ${COHORT_DAYS} entries, \`day\` 0 to ${COHORT_DAYS - 1} ascending: UTC calendar days after each member's own anchor day (day 0 is the anchor day itself). ` +
        'A bucket\'s `eligible` counts the members whose day anchorDay + day has begun by now (its UTC day is today or earlier); `retained` counts only eligible members; `pct` is retained / eligible rounded to 4 decimals, 0 when none is eligible, so a cohort still running is never shown as churned. ' +
        'Cohorts: `developer-token-7d`: members are API tokens created in the range (revoked ones stay members); retained on day k when the token authenticated at least one request on UTC day anchorDay + k (each day on its own, not cumulative). ' +
        '`incident-postmortem-7d`: members are empire incidents opened in the range; retained on day k when the incident\'s postmortem was first stored on or before the end of UTC day anchorDay + k (cumulative; replacing a postmortem does not move it). ' +
        'A token bound to toolsets gets 403 `forbidden` for `developer-token-7d` (it counts every API token, so it spans every toolset) and counts only its toolsets\' incidents for `incident-postmortem-7d`. ' +
        `400 \`unknown-cohort\` for a \`key\` that is not registered (${COHORT_KEYS.join(', ')}), \`invalid-date\` for a day that is not a calendar date, \`invalid-range\` when \`from\` is not before \`to\` or the range is too long. ` +
        'The same state answers the same body apart from `generatedAt`.',
      method: 'GET',
      path: `${V1}/analytics/cohort`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: 'analytics',
      kind: 'read',
      uiPath: '/analytics',
      query: Type.Object(
        {
          key: Type.String({ minLength: 1, maxLength: 64, description: `The cohort: ${COHORT_KEYS.join(' or ')}.`, examples: ['developer-token-7d'] }),
          from: DayParam('First anchor day (inclusive), YYYY-MM-DD (UTC).', '2026-11-01'),
          to: DayParam(`Day after the last anchor day (exclusive), YYYY-MM-DD (UTC); at most ${COHORT_RANGE_MAX_DAYS} days after from.`, '2026-11-08'),
        },
        { examples: [{ key: 'incident-postmortem-7d', from: '2026-11-01', to: '2026-11-08' }] },
      ),
      response: {
        schemaId: 'svc-analytics-cohort.v1',
        fields: {
          key: StringEnum(COHORT_KEYS),
          anchorLabel: Type.String({ description: 'What makes a member: the anchor event.' }),
          followLabel: Type.String({ description: 'What retains a member on a day: the follow event.' }),
          from: Type.String({ format: 'date' }),
          to: Type.String({ format: 'date' }),
          cohortSize: Type.Integer({ minimum: 0, description: 'Members whose anchor day is in [from, to).' }),
          buckets: Type.Array(Bucket, { minItems: COHORT_DAYS, maxItems: COHORT_DAYS, description: `Days 0 to ${COHORT_DAYS - 1}, ascending.` }),
        },
      },
      example: {
        schema: 'svc-analytics-cohort.v1',
        generatedAt,
        key: 'incident-postmortem-7d',
        anchorLabel: 'empire incident opened',
        followLabel: 'incident has a postmortem',
        from: '2026-11-19',
        to: '2026-11-22',
        cohortSize: 4,
        buckets: [
          { day: 0, eligible: 4, retained: 1, pct: 0.25 },
          { day: 1, eligible: 4, retained: 2, pct: 0.5 },
          { day: 2, eligible: 4, retained: 3, pct: 0.75 },
          { day: 3, eligible: 4, retained: 3, pct: 0.75 },
          { day: 4, eligible: 4, retained: 3, pct: 0.75 },
          { day: 5, eligible: 4, retained: 3, pct: 0.75 },
          { day: 6, eligible: 3, retained: 2, pct: 0.6667 },
          { day: 7, eligible: 1, retained: 1, pct: 1 },
        ],
      },
      handler: async ({ query, principal }) => service.read(principal as Principal, query),
    }),
  ];
}
