import { useState } from 'react';
import { useAction, useQuery } from '../../../app/useQuery';
import { Can } from '../../../auth/session';
import { Busy, DataTable, ErrorNote, Field, Form, Panel, Time } from '../../../components';
import { loadToolsets, registerToolset, removeToolset } from './api';

/** The toolsets asked by the cross-toolset check: register one, remove one. */
export function ToolsetsPanel({ refreshKey, onChanged }: { refreshKey: number; onChanged: () => void }) {
  const state = useQuery(loadToolsets, [refreshKey]);
  const remove = useAction(removeToolset);
  const [removing, setRemoving] = useState<string | null>(null);
  const onRemove = async (toolset: string) => {
    if (!window.confirm(`Remove ${toolset} from the cross-toolset restore view? Its last check is forgotten.`)) return;
    setRemoving(toolset);
    if (await remove.execute(toolset)) onChanged();
    setRemoving(null);
  };
  return (
    <Panel
      title="Registered toolsets"
      state={state}
      minHeight={140}
      isEmpty={(d) => d.toolsets.length === 0}
      empty="No toolsets registered: register a toolset's bridge verify endpoint below."
    >
      {(d) => (
        <>
          {remove.error && <ErrorNote error={remove.error} />}
          <DataTable
            caption="Toolsets of the cross-toolset restore view"
            rows={d.toolsets}
            rowKey={(t) => t.toolset}
            columns={[
              { key: 'toolset', label: 'Toolset', sortValue: (t) => t.toolset, render: (t) => <code>{t.toolset}</code> },
              { key: 'verifyUrl', label: 'Verify endpoint', render: (t) => <code>{t.verifyUrl}</code> },
              { key: 'database', label: 'Database', sortValue: (t) => t.database },
              { key: 'vercelProject', label: 'Vercel project', render: (t) => t.vercelProject ?? <span className="muted">—</span> },
              { key: 'updatedAt', label: 'Changed', sortValue: (t) => t.updatedAt, render: (t) => <>{<Time at={t.updatedAt} />}{t.updatedBy ? ` by ${t.updatedBy}` : ''}</> },
              {
                key: 'remove',
                label: 'Remove',
                render: (t) => (
                  <Can scope="write:alerts">
                    <button type="button" className="danger" disabled={remove.busy} onClick={() => void onRemove(t.toolset)} aria-label={`Remove ${t.toolset}`}>
                      Remove
                    </button>
                    {removing === t.toolset && <Busy label="Removing…" />}
                  </Can>
                ),
              },
            ]}
          />
        </>
      )}
    </Panel>
  );
}

/** Registers (or replaces) a toolset's bridge-gated verify endpoint. */
export function RegisterToolsetForm({ onSaved }: { onSaved: () => void }) {
  const [toolset, setToolset] = useState('');
  const [verifyUrl, setVerifyUrl] = useState('');
  const [database, setDatabase] = useState('');
  const [vercelProject, setVercelProject] = useState('');
  const action = useAction(registerToolset);
  const [saved, setSaved] = useState<string | null>(null);
  const submit = async () => {
    setSaved(null);
    const answer = await action.execute(toolset.trim(), { verifyUrl: verifyUrl.trim(), database: database.trim(), vercelProject: vercelProject.trim() || null });
    if (answer) {
      setSaved(`${answer.toolset.toolset} ${answer.created ? 'registered' : 'changed'}.`);
      onSaved();
    }
  };
  return (
    <Can scope="write:alerts">
      <section className="panel">
        <h2>Register a toolset</h2>
        <Form label="Register a toolset" onSubmit={() => void submit()} busy={action.busy} error={action.error} submitLabel="Register">
          <Field label="Toolset name" hint="A letter, then letters, digits or -.">
            <input value={toolset} onChange={(e) => setToolset(e.target.value)} required minLength={3} maxLength={128} />
          </Field>
          <Field label="Bridge verify URL" hint="https://…/api/observatory/v1/backups/bridge/verify on a host listed in OBSERVATORY_BRIDGE_PEER_HOSTS.">
            <input type="url" value={verifyUrl} onChange={(e) => setVerifyUrl(e.target.value)} required />
          </Field>
          <Field label="Database">
            <input value={database} onChange={(e) => setDatabase(e.target.value)} required />
          </Field>
          <Field label="Vercel project (optional)">
            <input value={vercelProject} onChange={(e) => setVercelProject(e.target.value)} maxLength={128} />
          </Field>
        </Form>
        {saved && (
          <p className="badge ok" role="status">
            {saved}
          </p>
        )}
      </section>
    </Can>
  );
}
