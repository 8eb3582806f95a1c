import { api, unwrap } from '../../../api/client';

/** The graph endpoints this page calls, typed from the OpenAPI document. */

export const runGraphQuery = (body: { query?: string; savedName?: string; limit?: number }) =>
  unwrap(api.POST('/api/observatory/v1/empire/graph/query', { body }));
export type QueryAnswer = Awaited<ReturnType<typeof runGraphQuery>>;

export const listSavedQueries = () => unwrap(api.GET('/api/observatory/v1/empire/graph/saved-queries'));
export type SavedQuery = Awaited<ReturnType<typeof listSavedQueries>>['rows'][number];

export const saveQuery = (body: { name: string; query: string; description?: string; visibility?: SavedQuery['visibility'] }) =>
  unwrap(api.POST('/api/observatory/v1/empire/graph/saved-queries', { body }));

export const readMaterialiser = (recent: number) => unwrap(api.GET('/api/observatory/v1/empire/graph/materialiser', { params: { query: { recent } } }));
export type MaterialiserState = Awaited<ReturnType<typeof readMaterialiser>>;

export const readGraphSlo = () => unwrap(api.GET('/api/observatory/v1/empire/graph/slo'));

export const replayMaterialisation = (materialisationId: string) =>
  unwrap(api.GET('/api/observatory/v1/empire/graph/replay/{materialisationId}', { params: { path: { materialisationId } } }));

/** The job that materialises the graph, run now (the `refresh` call a query's freshness names). */
export const materialiseNow = () => unwrap(api.POST('/api/observatory/v1/ops/jobs/{job}/run', { params: { path: { job: 'graph-materialise' } }, body: {} }));
