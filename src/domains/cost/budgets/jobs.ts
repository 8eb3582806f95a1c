import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import { type CostBudgetService, JOB_NAME, JOB_SCHEDULE, PREVIOUS_MONTH_GRACE_DAYS } from './service.ts';

/** Spec D5 `cost-budget-evaluate`: every 15 minutes (UTC), and on demand through `POST {v1}/ops/jobs/cost-budget-evaluate/run`. */
export function costBudgetJobs(service: CostBudgetService): JobDefinition[] {
  return [
    {
      name: JOB_NAME,
      description:
        `Evaluates every cost budget against the month's spend (and, during the first ${PREVIOUS_MONTH_GRACE_DAYS} days of a month, the previous month's, for late records): ` +
        'each threshold crossed without an alert for (budget, month, threshold) opens one, records a cost-alert-fired audit fact and enqueues its notification for outbound-dispatch. A rerun opens nothing new.',
      schedule: JOB_SCHEDULE,
      run: async ({ now, log }) => ({ ...(await service.evaluate(now, log)) }),
    },
  ];
}
