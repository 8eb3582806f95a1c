import { useUrlState } from '../../../app/urlState';
import type { QueryState } from '../../../app/useQuery';
import { DataTable, Field, Panel, Time } from '../../../components';
import { type ChainPage, FACT_KINDS, FACT_SOURCES, short } from './api';

/** The chain newest first, filtered by actor, kind and source, paged by cursor (all in the address). */
export function ChainList({ state }: { state: QueryState<ChainPage> }) {
  const { get, set } = useUrlState();
  const cursor = get('cursor');
  return (
    <Panel
      title="Audit facts"
      state={state}
      minHeight={300}
      isEmpty={(d) => d.facts.length === 0}
      empty={cursor || get('actor') || get('kind') || get('source') ? 'No facts match these filters: clear them to see the whole chain.' : 'The chain is empty: facts appear with the first audited change.'}
      actions={
        <div className="toolbar">
          <Field label="Actor">
            <input defaultValue={get('actor')} key={get('actor')} size={12} onBlur={(e) => set({ actor: e.target.value.trim() || null, cursor: null })} onKeyDown={(e) => e.key === 'Enter' && set({ actor: e.currentTarget.value.trim() || null, cursor: null })} />
          </Field>
          <Field label="Kind">
            <select value={get('kind')} onChange={(e) => set({ kind: e.target.value || null, cursor: null })}>
              <option value="">every kind</option>
              {FACT_KINDS.map((k) => (
                <option key={k}>{k}</option>
              ))}
            </select>
          </Field>
          <Field label="Source">
            <select value={get('source')} onChange={(e) => set({ source: e.target.value || null, cursor: null })}>
              <option value="">every source</option>
              {FACT_SOURCES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </Field>
        </div>
      }
    >
      {(d) => (
        <>
          {d.head && (
            <p className="muted">
              Head: fact {d.head.seqNo}, <code title={d.head.headHash}>{short(d.head.headHash)}</code> (read <Time at={d.head.observedAt} />)
            </p>
          )}
          <DataTable
            caption="Audit facts, highest seqNo first"
            rows={d.facts}
            rowKey={(f) => f.id}
            pageSize={50}
            columns={[
              { key: 'seqNo', label: 'seqNo', align: 'right', sortValue: (f) => Number(f.seqNo) },
              { key: 'ts', label: 'When', sortValue: (f) => f.ts, render: (f) => <Time at={f.ts} /> },
              { key: 'kind', label: 'Kind', sortValue: (f) => f.kind },
              { key: 'source', label: 'Source', sortValue: (f) => f.source },
              { key: 'actor', label: 'Actor', sortValue: (f) => f.actor, render: (f) => f.actor ?? <span className="muted">system</span> },
              { key: 'entryHash', label: 'entryHash', render: (f) => <code title={f.entryHash}>{short(f.entryHash)}</code> },
              {
                key: 'open',
                label: 'Proof',
                render: (f) => (
                  <button type="button" aria-pressed={get('fact') === f.seqNo} onClick={() => set({ fact: f.seqNo })} aria-label={`Open fact ${f.seqNo} and check its proof`}>
                    Open fact {f.seqNo}
                  </button>
                ),
              },
            ]}
          />
          <nav className="pager" aria-label="Chain pages">
            <button type="button" disabled={!cursor} onClick={() => set({ cursor: null })}>
              Newest
            </button>
            <button type="button" disabled={!d.nextCursor} onClick={() => set({ cursor: d.nextCursor })}>
              Older facts
            </button>
          </nav>
        </>
      )}
    </Panel>
  );
}
