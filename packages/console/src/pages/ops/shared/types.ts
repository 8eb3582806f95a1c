import type { Answer } from '../../settings/shared/api-types';

export type CronHealth = Answer<'getCronHealth'>;
export type JobRun = CronHealth['recent'][number];
export type JobHealth = CronHealth['latestPerJob'][number];
export type AuditRow = Answer<'listOperatorAudit'>['rows'][number];
