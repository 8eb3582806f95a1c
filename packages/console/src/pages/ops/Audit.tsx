import { useEffect, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useUrlState } from '../../app/urlState';
import { useQuery } from '../../app/useQuery';
import { type Column, DataTable, Field, Panel, Time } from '../../components';
import { NEWEST, newerPage, olderPage, readPage } from './shared/auditPaging';
import { Change } from './shared/Change';
import type { AuditRow } from './shared/types';
import './shared/ops.css';

const LIMITS = ['50', '100', '500'] as const;

const columns: Column<AuditRow>[] = [
  { key: 'seqNo', label: 'Seq', align: 'right', sortValue: (r) => Number(r.seqNo) },
  { key: 'ts', label: 'Time', sortValue: (r) => r.ts, render: (r) => <Time at={r.ts} /> },
  { key: 'actor', label: 'Actor', sortValue: (r) => r.actor, render: (r) => r.actor ?? <span className="muted">system</span> },
  { key: 'surface', label: 'Surface', sortValue: (r) => r.surface },
  { key: 'verb', label: 'Verb', sortValue: (r) => r.verb, render: (r) => <code>{r.verb}</code> },
  { key: 'target', label: 'Target', sortValue: (r) => r.target, render: (r) => <code>{r.target}</code> },
  { key: 'change', label: 'Change', render: (r) => <Change row={r} /> },
  { key: 'requestId', label: 'Request', render: (r) => (r.requestId ? <code title={r.requestId}>{r.requestId.slice(0, 8)}</code> : <span className="muted">—</span>) },
];

/** Every state-changing call, newest first: filter by verb, page back through time; all in the address. */
export default function Audit() {
  const { get, set } = useUrlState();
  const verb = get('verb');
  const limit = (LIMITS as readonly string[]).includes(get('limit')) ? Number(get('limit')) : 100;
  const page = readPage(get('cursor'), get('back'));
  const log = useQuery(
    () =>
      unwrap(
        api.GET('/api/observatory/v1/honeypot/ops/audit', {
          params: { query: { limit, ...(page.cursor ? { cursor: page.cursor } : {}), ...(verb ? { verb } : {}) } },
        }),
      ),
    [limit, page.cursor, verb],
  );
  const [verbInput, setVerbInput] = useState(verb);
  // Back and forward in the browser change the address: the input follows it.
  useEffect(() => setVerbInput(verb), [verb]);
  const seenVerbs = [...new Set((log.data?.rows ?? []).map((r) => r.verb))].sort();

  return (
    <>
      <div className="page-head">
        <h1>Operator audit log</h1>
      </div>
      <form
        className="filters panel"
        aria-label="Audit filters"
        onSubmit={(e) => {
          e.preventDefault();
          set({ verb: verbInput.trim() || null, ...NEWEST });
        }}
      >
        <Field label="Verb" hint="Exact, e.g. tenant.create or token.revoke.">
          <input name="verb" list="audit-verbs" value={verbInput} onChange={(e) => setVerbInput(e.target.value)} spellCheck={false} />
        </Field>
        <datalist id="audit-verbs">
          {seenVerbs.map((v) => (
            <option key={v} value={v} />
          ))}
        </datalist>
        <Field label="Rows per page">
          <select value={String(limit)} onChange={(e) => set({ limit: e.target.value === '100' ? null : e.target.value, ...NEWEST })}>
            {LIMITS.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit" className="primary">
          Apply
        </button>
        {verb && (
          <button
            type="button"
            onClick={() => {
              setVerbInput('');
              set({ verb: null, ...NEWEST });
            }}
          >
            Clear filter
          </button>
        )}
      </form>
      <Panel
        title={verb ? `Entries with verb ${verb}` : 'Entries'}
        state={log}
        minHeight={320}
        isEmpty={(d) => d.rows.length === 0}
        empty={verb ? `No entries with the verb “${verb}”: check its spelling, or clear the filter.` : 'Nothing has been changed yet.'}
      >
        {(d) => (
          <>
            <DataTable caption="Newest first" columns={columns} rows={d.rows} rowKey={(r) => r.id} pageSize={limit} />
            <nav className="pager" aria-label="Audit pages">
              <button type="button" onClick={() => set(NEWEST)} disabled={page.cursor === null}>
                Newest
              </button>
              <button type="button" onClick={() => set(newerPage(page))} disabled={page.cursor === null}>
                Newer
              </button>
              <span>Page {page.back.length + 1}</span>
              <button type="button" onClick={() => d.nextCursor && set(olderPage(page, d.nextCursor))} disabled={d.nextCursor === null}>
                Older
              </button>
            </nav>
          </>
        )}
      </Panel>
    </>
  );
}
