import { useState } from 'react';
import { useUrlState } from '../../app/urlState';
import { useAction, useQuery } from '../../app/useQuery';
import { Can } from '../../auth/session';
import { DataTable, ErrorNote, Panel, Time } from '../../components';
import { Badge } from '../empire/shared/badges';
import { actOnSubprocessor, loadSubprocessors, type Subprocessor } from './shared/api';
import { SubprocessorForm } from './shared/SubprocessorForm';
import './shared/compliance.css';

function Links({ row }: { row: Subprocessor }) {
  if (!row.websiteUrl && !row.contractUrl) return <span className="muted">—</span>;
  return (
    <span className="chips">
      {row.websiteUrl && (
        <a href={row.websiteUrl} target="_blank" rel="noopener noreferrer">
          website
        </a>
      )}
      {row.contractUrl && (
        <a href={row.contractUrl} target="_blank" rel="noopener noreferrer">
          contract
        </a>
      )}
    </span>
  );
}

/** The subprocessors the service uses: list (archived ones on request), register or change one, review or archive it. */
export default function Subprocessors() {
  const { get, set } = useUrlState();
  const includeArchived = get('archived') === '1';
  const [changes, setChanges] = useState(0);
  const state = useQuery(() => loadSubprocessors(includeArchived), [includeArchived, changes]);
  const act = useAction(actOnSubprocessor);
  const [editing, setEditing] = useState<Subprocessor | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  // A saved form starts empty again.
  const [saves, setSaves] = useState(0);
  const changed = (message: string) => {
    setSaved(message);
    setChanges((n) => n + 1);
  };

  const onAct = async (row: Subprocessor, action: 'review' | 'archive') => {
    setSaved(null);
    const answer = await act.execute(row.id, action);
    if (answer) changed(action === 'review' ? `${answer.row.name} reviewed.` : `${answer.row.name} archived.`);
  };

  return (
    <>
      <div className="page-head">
        <h1>Subprocessors</h1>
        <label className="check">
          <input type="checkbox" checked={includeArchived} onChange={(e) => set({ archived: e.target.checked ? '1' : null })} /> Show archived
        </label>
      </div>
      {act.error && <ErrorNote error={act.error} />}
      {saved && (
        <p className="badge ok" role="status">
          {saved}
        </p>
      )}
      <Panel
        title={includeArchived ? 'Subprocessors, archived ones included' : 'Subprocessors in use'}
        state={state}
        minHeight={160}
        isEmpty={(d) => d.rows.length === 0}
        empty="No subprocessor is registered: register those the service uses below. The compliance check of supplier reviews reads this list."
      >
        {(d) => (
          <DataTable
            caption="Subprocessors, by name"
            rows={d.rows}
            rowKey={(r) => r.id}
            columns={[
              { key: 'name', label: 'Name', sortValue: (r) => r.name.toLowerCase() },
              { key: 'role', label: 'Role', sortValue: (r) => r.role },
              { key: 'dataAccess', label: 'Data it can reach', render: (r) => (r.dataAccess ? <span className="summary">{r.dataAccess}</span> : <span className="muted">—</span>) },
              { key: 'region', label: 'Region', sortValue: (r) => r.region, render: (r) => r.region || <span className="muted">—</span> },
              { key: 'links', label: 'Links', render: (r) => <Links row={r} /> },
              {
                key: 'lastReviewedAt',
                label: 'Last reviewed',
                sortValue: (r) => r.lastReviewedAt,
                render: (r) => (r.lastReviewedAt ? <Time at={r.lastReviewedAt} /> : <span className="muted">never</span>),
              },
              {
                key: 'status',
                label: 'Status',
                sortValue: (r) => r.archivedAt ?? '',
                render: (r) =>
                  r.archivedAt ? (
                    <>
                      <Badge tone="neutral">archived</Badge> <Time at={r.archivedAt} />
                    </>
                  ) : (
                    <Badge tone="ok">in use</Badge>
                  ),
              },
              {
                key: 'actions',
                label: 'Actions',
                render: (r) => (
                  <Can scope="write:alerts">
                    <span className="chips">
                      <button type="button" onClick={() => setEditing(r)} aria-label={`Change ${r.name}`}>
                        Change
                      </button>
                      <button type="button" disabled={act.busy} onClick={() => void onAct(r, 'review')} aria-label={`Review ${r.name}`}>
                        Review
                      </button>
                      {!r.archivedAt && (
                        <button type="button" className="danger" disabled={act.busy} onClick={() => void onAct(r, 'archive')} aria-label={`Archive ${r.name}`}>
                          Archive
                        </button>
                      )}
                    </span>
                  </Can>
                ),
              },
            ]}
          />
        )}
      </Panel>
      <Can scope="write:alerts">
        <SubprocessorForm
          key={`${editing?.id ?? 'new'}-${saves}`}
          from={editing}
          onSaved={(row) => {
            setEditing(null);
            setSaves((n) => n + 1);
            changed(`${row.name} saved.`);
          }}
        />
      </Can>
    </>
  );
}
