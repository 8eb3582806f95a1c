import { api, unwrap } from '../../../api/client';
import type { paths } from '../../../api/schema';

/** The audit chain's endpoints, typed from the served OpenAPI document. */
type ChainQuery = NonNullable<paths['/api/observatory/v1/audit/chain']['get']['parameters']['query']>;
export type FactKind = NonNullable<ChainQuery['kind']>;
export type FactSource = NonNullable<ChainQuery['source']>;

export const FACT_KINDS: readonly FactKind[] = ['operator', 'drift', 'backup', 'region-drill', 'compliance', 'cost-alert-fired', 'cost-alert-acknowledged', 'cost-alert-resolved'];
export const FACT_SOURCES: readonly FactSource[] = ['OperatorAudit', 'TrustDriftEvent', 'RestoreVerification', 'RegionFailoverDrill', 'ComplianceEvaluation', 'CostAlert'];

export const loadChain = (query: { actor?: string; kind?: FactKind; source?: FactSource; cursor?: string }) =>
  unwrap(api.GET('/api/observatory/v1/audit/chain', { params: { query: { ...query, limit: 50 } } }));
export const loadFact = (id: string) => unwrap(api.GET('/api/observatory/v1/audit/chain/{id}', { params: { path: { id } } }));
export const verifyChain = () => unwrap(api.POST('/api/observatory/v1/audit/chain/verify', { body: {} }));

export type ChainPage = Awaited<ReturnType<typeof loadChain>>;
export type FactSummary = ChainPage['facts'][number];
export type FactAnswer = Awaited<ReturnType<typeof loadFact>>;
export type ChainVerification = Awaited<ReturnType<typeof verifyChain>>;

export const short = (hash: string) => `${hash.slice(0, 12)}…`;
