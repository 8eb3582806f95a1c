import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, V1 } from '../../../platform/http/registry.ts';
import { generatedAt, TAG, UI_METRICS } from '../schemas.ts';
import { BUDGET_MAX_CENTS, type BudgetService } from './service.ts';

/** The monthly model budget (spec B `GET`/`POST triage/budget`; docs/triage/README.md, "Budget"). */

const Budget = {
  month: Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$' }),
  toolset: Type.String({ description: '`*` is the empire-wide bucket (every run); a toolset\'s bucket holds the runs charged to it.' }),
  budgetUsdCents: Type.Integer({ minimum: 0 }),
  spentUsdCents: Type.Integer({ minimum: 0, description: 'Recomputed from the month\'s run token counts and the price table on every call.' }),
  pctSpent: Type.Number({ minimum: 0 }),
  isDegraded: Type.Boolean({ description: 'Spend at or over budget, or `degradedUntil` ahead: the non-safety agents are deferred.' }),
  degradedUntil: Nullable(IsoDate),
};
const example = { month: '2026-11', toolset: '*', budgetUsdCents: 10000, spentUsdCents: 1234, pctSpent: 12.34, isDegraded: false, degradedUntil: null };

export function budgetEndpoints(deps: { budget: BudgetService }): Endpoint[] {
  return [
    defineEndpoint({
      id: 'readTriageBudget',
      title: 'Read the model budget',
      description: 'The month\'s buckets (default the current month, UTC): `*` always (OBSERVATORY_TRIAGE_BUDGET_USD_CENTS when no budget was set) and every toolset given one. A token bound to toolsets sees its own buckets only.',
      method: 'GET',
      path: `${V1}/empire/triage/budget`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_METRICS,
      query: Type.Object({ month: Type.Optional(Type.String({ maxLength: 7, description: 'YYYY-MM; the current month when absent.' })) }, { examples: [{ month: '2026-11' }] }),
      response: { schemaId: 'svc-triage-budget.v1', fields: { month: Type.String(), budgets: Type.Array(Type.Object(Budget)) } },
      example: { schema: 'svc-triage-budget.v1', generatedAt, month: '2026-11', budgets: [example] },
      handler: async ({ query, principal }) => deps.budget.list(principal, query.month),
    }),
    defineEndpoint({
      id: 'setTriageBudget',
      title: 'Set the model budget',
      description:
        `Sets one bucket's monthly budget (\`budgetUsdCents\`, 0 to ${BUDGET_MAX_CENTS}; 0 defers the non-safety agents all month) and \`degradedUntil\` (defer them until then; null clears it). Defaults: toolset \`*\`, the current month; members left out keep their value. ` +
        'Only an unbound credential sets `*`; a token bound to toolsets sets its own. Audited as `triage.budget-set`.',
      method: 'POST',
      path: `${V1}/empire/triage/budget`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_METRICS,
      body: Type.Object(
        {
          budgetUsdCents: Type.Optional(Type.Integer({ minimum: 0, maximum: BUDGET_MAX_CENTS })),
          degradedUntil: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
          month: Type.Optional(Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$' })),
          toolset: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
        },
        { additionalProperties: false, examples: [{ budgetUsdCents: 10000, degradedUntil: null, month: '2026-11', toolset: '*' }] },
      ),
      response: { schemaId: 'svc-triage-budget.v1', fields: { ok: Type.Boolean(), ...Budget } },
      example: { schema: 'svc-triage-budget.v1', generatedAt, ok: true, ...example },
      handler: async ({ body, principal, requestId }) => deps.budget.set({ principal: principal as Principal, requestId }, body),
    }),
  ];
}
