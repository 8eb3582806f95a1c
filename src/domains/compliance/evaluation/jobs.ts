import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import type { EvaluationService } from './service.ts';

/** The hourly evaluation (spec C Limits; D5 `compliance-evaluate`). */
export const COMPLIANCE_EVALUATE_SCHEDULE = '11 * * * *';

export function evaluationJobs(evaluations: EvaluationService): JobDefinition[] {
  return [
    {
      name: 'compliance-evaluate',
      description: 'Evaluates every control of the shipped frameworks over the live system and stores each outcome with its observed input; a run where some input could not be read ends in error, naming it (the other controls are stored).',
      schedule: COMPLIANCE_EVALUATE_SCHEDULE,
      async run() {
        const pass = await evaluations.evaluateAll();
        if (pass.failures.length > 0) {
          throw new Error(`evaluated ${pass.evaluated} controls; could not read the input of ${pass.failures.map((f) => `${f.predicateKey} (${f.error})`).join(', ')}`);
        }
        return { evaluated: pass.evaluated, ...pass.outcomes, overridesEnded: pass.overridesEnded };
      },
    },
  ];
}
