import type { FormEvent } from 'react';
import { Field } from '../../../components';
import { GRAPH_QUERY_EXAMPLES } from './examples';

export const LIMITS = ['25', '100', '500', '1000'] as const;

/**
 * The query box: a labelled textarea, the language's worked examples as buttons that fill it, the
 * row limit, and Run (also Ctrl+Enter in the box).
 */
export function QueryEditor({
  draft,
  onDraft,
  limit,
  onLimit,
  onRun,
  running,
}: {
  draft: string;
  onDraft: (text: string) => void;
  limit: string;
  onLimit: (limit: string) => void;
  onRun: () => void;
  running: boolean;
}) {
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (draft.trim() !== '') onRun();
  };
  return (
    <section className="panel">
      <form className="query-form" aria-label="Graph query" onSubmit={submit}>
        <Field label="Query" hint="openCypher subset: MATCH, WHERE, RETURN, ORDER BY, SKIP, LIMIT (read-only). Ctrl+Enter runs it.">
          <textarea
            rows={6}
            value={draft}
            spellCheck={false}
            onChange={(e) => onDraft(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) submit(e);
            }}
            placeholder="MATCH (t:Toolset)<-[:EMITTED_BY]-(e:EmpireEvent) RETURN t.key AS toolset, count(e) AS events"
          />
        </Field>
        <div className="form-actions">
          <button type="submit" className="primary" disabled={running || draft.trim() === ''}>
            Run
          </button>
          <label className="field inline">
            <span className="field-label">Rows at most</span>
            <select aria-label="Rows at most" value={limit} onChange={(e) => onLimit(e.target.value)}>
              {LIMITS.map((l) => (
                <option key={l} value={l}>
                  {l}
                </option>
              ))}
            </select>
          </label>
        </div>
      </form>
      <div className="examples" role="group" aria-labelledby="graph-examples-title">
        <h3 id="graph-examples-title">Examples (fill the box)</h3>
        <ul>
          {GRAPH_QUERY_EXAMPLES.map((example) => (
            <li key={example.n}>
              <button type="button" title={example.query} onClick={() => onDraft(example.query)}>
                {example.title}
              </button>
            </li>
          ))}
        </ul>
      </div>
    </section>
  );
}
