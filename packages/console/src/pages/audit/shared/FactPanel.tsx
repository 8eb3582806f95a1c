import { useQuery } from '../../../app/useQuery';
import { Panel, Time } from '../../../components';
import { loadFact } from './api';
import { ProofCheck } from './ProofCheck';

/** One fact with its payload and its inclusion proof, checked in this browser. */
export function FactPanel({ id, onClose }: { id: string; onClose: () => void }) {
  const state = useQuery(() => loadFact(id), [id]);
  return (
    <Panel
      title={`Fact ${state.data?.fact.seqNo ?? id}`}
      state={state}
      minHeight={320}
      actions={
        <button type="button" onClick={onClose}>
          Close
        </button>
      }
    >
      {(d) => (
        <div className="grid fact-panel">
          <div>
            <dl className="facts">
              <dt>seqNo</dt>
              <dd>{d.fact.seqNo}</dd>
              <dt>Id</dt>
              <dd>
                <code>{d.fact.id}</code>
              </dd>
              <dt>When</dt>
              <dd>
                <Time at={d.fact.ts} />
              </dd>
              <dt>Kind / source</dt>
              <dd>
                {d.fact.kind} / {d.fact.source} <code>{d.fact.sourceId}</code>
              </dd>
              <dt>Actor</dt>
              <dd>{d.fact.actor ?? <span className="muted">system</span>}</dd>
              <dt>prevHash</dt>
              <dd>
                <code>{d.fact.prevHash}</code>
              </dd>
              <dt>entryHash</dt>
              <dd>
                <code>{d.fact.entryHash}</code>
              </dd>
              <dt>Chain head</dt>
              <dd>
                fact {d.head.seqNo}, <code>{d.head.headHash}</code>
              </dd>
            </dl>
            <h3>Payload</h3>
            <pre>{JSON.stringify(d.fact.payload, null, 2)}</pre>
          </div>
          <div>
            <h3>Inclusion proof</h3>
            <ProofCheck answer={d} />
            <details>
              <summary>The proof as answered ({d.proof.siblings.length} siblings)</summary>
              <ol>
                {d.proof.siblings.map((s, i) => (
                  <li key={i}>
                    {s.side}: <code>{s.hash}</code>
                  </li>
                ))}
              </ol>
            </details>
          </div>
        </div>
      )}
    </Panel>
  );
}
