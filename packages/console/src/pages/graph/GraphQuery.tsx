import { useEffect, useState } from 'react';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { Panel } from '../../components';
import { listSavedQueries, runGraphQuery } from './shared/api';
import { GraphLag, Materialiser } from './shared/GraphHealth';
import { LIMITS, QueryEditor } from './shared/QueryEditor';
import { QueryResults } from './shared/QueryResults';
import { SavedQueries, SaveQueryForm } from './shared/SavedQueries';
import './graph.css';

/**
 * The knowledge graph: a query box with the language's examples, the answer as a table and a
 * drawing, saved queries, and how current the graph is. The query that ran is in the address
 * (`?q=` for text, `?saved=` for a saved query by name, `?limit=`), so an answer can be shared.
 */
export default function GraphQuery() {
  const { get, set } = useUrlState();
  const q = get('q');
  const savedName = get('saved');
  const limit = (LIMITS as readonly string[]).includes(get('limit')) ? get('limit') : '100';
  const [draft, setDraft] = useState(q);
  const [generation, setGeneration] = useState(0);
  /** Moves when the graph was materialised from the page: the lag, the counts and the answer load again. */
  const [graphGeneration, setGraphGeneration] = useState(0);

  // The address leads: back/forward or a shared link puts its query in the box.
  useEffect(() => {
    if (q) setDraft(q);
  }, [q]);

  const active = q !== '' || savedName !== '';
  const answer = useQuery(
    () => runGraphQuery({ ...(savedName ? { savedName } : { query: q }), limit: Number(limit) }),
    [q, savedName, limit, generation],
    { enabled: active },
  );
  const saved = useQuery(listSavedQueries, []);

  // A saved query run by name shows its text in the box once it has answered.
  useEffect(() => {
    if (savedName && answer.data) setDraft(answer.data.query);
  }, [savedName, answer.data]);

  const run = () => {
    if (draft === q && !savedName) setGeneration((n) => n + 1);
    else set({ q: draft, saved: null });
  };

  return (
    <div className="graph-page">
      <div className="page-head">
        <h1>Knowledge graph</h1>
      </div>
      <QueryEditor draft={draft} onDraft={setDraft} limit={limit} onLimit={(l) => set({ limit: l === '100' ? null : l })} onRun={run} running={answer.loading && active} />
      {active ? (
        <Panel title={savedName ? `Answer of saved query “${savedName}”` : 'Answer'} state={answer} minHeight={200}>
          {(d) => <QueryResults answer={d} />}
        </Panel>
      ) : (
        <section className="panel" style={{ minHeight: 80 }}>
          <h2>Answer</h2>
          <p className="empty">No query has run yet: write one in the box or pick an example, then press Run.</p>
        </section>
      )}
      <div className="grid graph-side">
        <div>
          <SavedQueries
            saved={saved}
            onRun={(name) => {
              saved.reload();
              set({ saved: name, q: null });
            }}
            onLoad={(text) => setDraft(text)}
          />
          <section className="panel">
            <h2>Save the query in the box</h2>
            <SaveQueryForm draft={draft} onSaved={saved.reload} />
          </section>
        </div>
        <GraphLag generation={graphGeneration} />
      </div>
      <Materialiser
        generation={graphGeneration}
        onMaterialised={() => {
          setGraphGeneration((n) => n + 1);
          if (active) setGeneration((n) => n + 1);
        }}
      />
    </div>
  );
}
