import { Link } from 'react-router';
import { Described } from './Described';
import { examplesOf, type ManifestEntry } from './manifest';

const json = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));

function Example({ title, value }: { title: string; value: unknown }) {
  return (
    <div>
      <h3>{title}</h3>
      <pre>{json(value)}</pre>
    </div>
  );
}

/** One endpoint: what it does, who may call it, its request examples and an example answer. */
export function EndpointDetail({ entry, onClose }: { entry: ManifestEntry; onClose: () => void }) {
  const requests = [
    ...examplesOf(entry.paramsSchema).map((v) => ({ title: 'Path parameters', value: v })),
    ...examplesOf(entry.querySchema).map((v) => ({ title: 'Query', value: v })),
    ...examplesOf(entry.bodySchema).map((v) => ({ title: 'Body', value: v })),
  ];
  return (
    <section className="panel endpoint-detail" role="region" aria-label={`Endpoint ${entry.id}`}>
      <header className="panel-head">
        <h2>{entry.title}</h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </header>
      <p>
        <span className={`method method-${entry.method.toLowerCase()}`}>{entry.method}</span> <code>{entry.path}</code>
      </p>
      <Described text={entry.description} />
      <dl className="facts">
        <dt>Operation</dt>
        <dd>
          <code>{entry.id}</code>
        </dd>
        <dt>Authentication</dt>
        <dd>{entry.auth}</dd>
        <dt>Scope</dt>
        <dd>{entry.scope ? <code>{entry.scope}</code> : <span className="muted">none needed</span>}</dd>
        <dt>Kind</dt>
        <dd>{entry.kind}</dd>
        <dt>Console page</dt>
        <dd>{entry.uiPath ? <Link to={entry.uiPath}>{entry.uiPath}</Link> : <span className="muted">none</span>}</dd>
      </dl>
      <div className="examples">
        {requests.length === 0 ? <p className="muted">No request parameters.</p> : requests.map((r, i) => <Example key={i} title={`Example request: ${r.title}`} value={r.value} />)}
        {entry.example !== null && entry.example !== undefined && <Example title="Example answer" value={entry.example} />}
      </div>
      <details>
        <summary>Schemas</summary>
        {(['paramsSchema', 'querySchema', 'bodySchema', 'responseSchema'] as const).map((name) =>
          entry[name] ? <Example key={name} title={name} value={entry[name]} /> : null,
        )}
      </details>
    </section>
  );
}
