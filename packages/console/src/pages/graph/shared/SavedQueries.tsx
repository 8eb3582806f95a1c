import { useState } from 'react';
import { type QueryState, useAction } from '../../../app/useQuery';
import { DataTable, Field, Form, Panel, Time } from '../../../components';
import { type listSavedQueries, saveQuery, type SavedQuery } from './api';

const VISIBILITIES: SavedQuery['visibility'][] = ['private', 'workspace', 'public'];

/** Saved queries: the list (run one, or load it into the box) and a form that saves the box's text. */
export function SavedQueries({
  saved,
  onRun,
  onLoad,
}: {
  saved: QueryState<Awaited<ReturnType<typeof listSavedQueries>>>;
  onRun: (name: string) => void;
  onLoad: (query: string) => void;
}) {
  return (
    <Panel
      title="Saved queries"
      state={saved}
      minHeight={220}
      isEmpty={(d) => d.rows.length === 0}
      empty="No saved queries yet: write or pick a query above, then save it here under a name."
    >
      {(d) => (
        <DataTable
          caption="Saved queries you can see"
          rows={d.rows}
          rowKey={(r) => r.id}
          pageSize={10}
          columns={[
            {
              key: 'name',
              label: 'Name',
              sortValue: (r) => r.name,
              render: (r) => (
                <>
                  <strong>{r.name}</strong>
                  {r.description && <div className="muted small">{r.description}</div>}
                </>
              ),
            },
            { key: 'visibility', label: 'Visibility', sortValue: (r) => r.visibility },
            { key: 'runCount', label: 'Runs', align: 'right', sortValue: (r) => r.runCount },
            { key: 'lastRunAt', label: 'Last run', sortValue: (r) => r.lastRunAt, render: (r) => <Time at={r.lastRunAt} /> },
            {
              key: 'actions',
              label: 'Actions',
              render: (r) => (
                <span className="row-actions">
                  <button type="button" onClick={() => onRun(r.name)} aria-label={`Run saved query ${r.name}`}>
                    Run
                  </button>
                  <button type="button" onClick={() => onLoad(r.query)} aria-label={`Load saved query ${r.name} into the box`}>
                    Edit
                  </button>
                </span>
              ),
            },
          ]}
        />
      )}
    </Panel>
  );
}

/** Saves the text in the query box under a name (replacing the caller's query of that name); any reader of the graph may. */
export function SaveQueryForm({ draft, onSaved }: { draft: string; onSaved: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [visibility, setVisibility] = useState<SavedQuery['visibility']>('private');
  const [done, setDone] = useState<string | null>(null);
  const save = useAction(saveQuery);
  return (
      <Form
        label="Save the current query"
        busy={save.busy}
        error={save.error}
        submitLabel="Save the query in the box"
        busyLabel="Saving…"
        onSubmit={() => {
          setDone(null);
          void save.execute({ name: name.trim(), query: draft, description, visibility }).then((answer) => {
            if (!answer) return;
            setDone(`${answer.created ? 'Saved' : 'Replaced'} “${answer.row.name}”.`);
            onSaved();
          });
        }}
      >
        <Field label="Name" hint="Letters, digits and dashes read best; saving a name you already have replaces it.">
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={128} />
        </Field>
        <Field label="Description">
          <input value={description} onChange={(e) => setDescription(e.target.value)} maxLength={1000} />
        </Field>
        <Field label="Visibility" hint="private: only you; workspace and public: every operator.">
          <select value={visibility} onChange={(e) => setVisibility(e.target.value as SavedQuery['visibility'])}>
            {VISIBILITIES.map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
        </Field>
        {draft.trim() === '' && <p className="muted">The query box is empty: write or pick a query first.</p>}
        {done && (
          <p role="status" className="ok-note">
            {done}
          </p>
        )}
      </Form>
  );
}
