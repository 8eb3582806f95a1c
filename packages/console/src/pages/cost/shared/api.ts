import { api, unwrap } from '../../../api/client';

/** The cost reads and writes, typed from the served OpenAPI document. */
export const ROLLUP_GROUPS = ['toolset', 'vendor', 'sku'] as const;
export type RollupGroup = (typeof ROLLUP_GROUPS)[number];

export const loadRollup = (query: { from: string; to: string; group: RollupGroup }) => unwrap(api.GET('/api/observatory/v1/cost/rollup', { params: { query } }));
export const loadByToolset = (query: { toolset: string; from: string; to: string }) => unwrap(api.GET('/api/observatory/v1/cost/by-toolset', { params: { query } }));
export const loadBudgets = () => unwrap(api.GET('/api/observatory/v1/cost/budgets'));

export const ALERT_FILTERS = ['open', 'acknowledged', 'resolved', 'all'] as const;
export type AlertFilter = (typeof ALERT_FILTERS)[number];
export const loadAlerts = (status: AlertFilter) => unwrap(api.GET('/api/observatory/v1/cost/alerts', { params: { query: { status, limit: '200' } } }));

export type SetBudgetBody = { scope: Budget['scope']; scopeKey: string; monthlyUsd: number; alertAtPct: number[] };
export const setBudget = (body: SetBudgetBody) => unwrap(api.POST('/api/observatory/v1/cost/budgets', { body }));
export const acknowledgeAlert = (id: string) => unwrap(api.POST('/api/observatory/v1/cost/alerts/{id}/ack', { params: { path: { id } }, body: {} }));
export const resolveAlert = (id: string) => unwrap(api.POST('/api/observatory/v1/cost/alerts/{id}/resolve', { params: { path: { id } }, body: {} }));

export type Budget = Awaited<ReturnType<typeof loadBudgets>>['budgets'][number];
export type CostAlert = Awaited<ReturnType<typeof loadAlerts>>['alerts'][number];

/** Dollars as the service counts them (to the micro-dollar), shown to the cent unless finer. */
export const usd = (value: number) => `$${value.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`;
