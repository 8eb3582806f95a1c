import { useUrlState } from '../../app/urlState';
import { useQuery } from '../../app/useQuery';
import { type FactKind, type FactSource, FACT_KINDS, FACT_SOURCES, loadChain } from './shared/api';
import { ChainList } from './shared/ChainList';
import { ChainVerify } from './shared/ChainVerify';
import { FactPanel } from './shared/FactPanel';

/** The hash-chained audit facts; a fact's inclusion proof checked in this browser; the chain walked on the server. */
export default function AuditChain() {
  const { get, set } = useUrlState();
  const actor = get('actor');
  const kind = (FACT_KINDS as readonly string[]).includes(get('kind')) ? (get('kind') as FactKind) : undefined;
  const source = (FACT_SOURCES as readonly string[]).includes(get('source')) ? (get('source') as FactSource) : undefined;
  const cursor = get('cursor');
  const fact = get('fact');
  const chain = useQuery(
    () => loadChain({ ...(actor ? { actor } : {}), ...(kind ? { kind } : {}), ...(source ? { source } : {}), ...(cursor ? { cursor } : {}) }),
    [actor, kind, source, cursor],
  );
  return (
    <>
      <div className="page-head">
        <h1>Audit chain</h1>
      </div>
      {fact && <FactPanel id={fact} onClose={() => set({ fact: null })} />}
      <ChainList state={chain} />
      <ChainVerify onDone={chain.reload} />
    </>
  );
}
