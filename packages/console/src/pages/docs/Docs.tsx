import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useUrlState } from '../../app/urlState';
import { useQuery } from '../../app/useQuery';
import { type Column, DataTable, Field, Panel } from '../../components';
import { EndpointDetail } from './shared/EndpointDetail';
import { type ManifestEntry, matches } from './shared/manifest';
import './shared/docs.css';

/** Every endpoint of the service, from its manifest: search it, open one for its examples, jump to its page. */
export default function Docs() {
  const { get, set } = useUrlState();
  const search = get('q');
  const tag = get('tag');
  const open = get('endpoint');
  const manifest = useQuery(() => unwrap(api.GET('/api/observatory/v1/manifest')), []);
  const [typed, setTyped] = useState(search);
  useEffect(() => setTyped(search), [search]);

  const columns: Column<ManifestEntry>[] = [
    { key: 'method', label: 'Method', sortValue: (e) => e.method, render: (e) => <span className={`method method-${e.method.toLowerCase()}`}>{e.method}</span> },
    {
      key: 'path',
      label: 'Endpoint',
      sortValue: (e) => e.path,
      render: (e) => (
        <>
          <button type="button" className="link" onClick={() => set({ endpoint: e.id })}>
            {e.title}
          </button>
          <div>
            <code>{e.path}</code>
          </div>
        </>
      ),
    },
    { key: 'scope', label: 'Scope', sortValue: (e) => e.scope ?? '', render: (e) => (e.scope ? <code>{e.scope}</code> : <span className="muted">none</span>) },
    { key: 'tag', label: 'Tag', sortValue: (e) => e.tag },
    { key: 'uiPath', label: 'Console page', sortValue: (e) => e.uiPath, render: (e) => (e.uiPath ? <Link to={e.uiPath}>{e.uiPath}</Link> : <span className="muted">—</span>) },
  ];

  return (
    <>
      <div className="page-head">
        <h1>API reference</h1>
      </div>
      <Panel title="Endpoints" state={manifest} minHeight={480}>
        {(m) => {
          const shown = m.endpoints.filter((e) => (tag === '' || e.tag === tag) && matches(e, search));
          const entry = m.endpoints.find((e) => e.id === open);
          return (
            <>
              <form
                className="toolbar"
                role="search"
                aria-label="Search endpoints"
                onSubmit={(e) => {
                  e.preventDefault();
                  set({ q: typed.trim() || null });
                }}
              >
                <Field label="Search">
                  <input type="search" name="q" value={typed} onChange={(e) => setTyped(e.target.value)} placeholder="path, title, scope, words of the description" />
                </Field>
                <Field label="Tag">
                  <select value={tag} onChange={(e) => set({ tag: e.target.value || null })}>
                    <option value="">Every tag</option>
                    {m.tags.map((t) => (
                      <option key={t} value={t}>
                        {t}
                      </option>
                    ))}
                  </select>
                </Field>
                <button type="submit" className="primary">
                  Search
                </button>
              </form>
              <p className="muted">
                {shown.length} of {m.endpoints.length} endpoints. Base URL <code>{m.baseUrl}</code>.
              </p>
              {open && !entry && <p className="empty">No endpoint is named “{open}”: pick one from the list.</p>}
              {entry && <EndpointDetail entry={entry} onClose={() => set({ endpoint: null })} />}
              <DataTable
                caption="Endpoints matching the search"
                columns={columns}
                rows={shown}
                rowKey={(e) => e.id}
                pageSize={50}
                empty="No endpoint matches: try fewer words, or every tag."
              />
            </>
          );
        }}
      </Panel>
    </>
  );
}
