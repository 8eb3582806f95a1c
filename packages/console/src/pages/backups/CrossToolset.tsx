import { useState } from 'react';
import { useAction, useQuery } from '../../app/useQuery';
import { Can } from '../../auth/session';
import { Busy, DataTable, ErrorNote, Panel, Time } from '../../components';
import { checkToolsets, loadCrossToolset, OutcomeBadge } from './shared/api';
import './shared/backups.css';
import { RegisterToolsetForm, ToolsetsPanel } from './shared/ToolsetsPanel';

/** Whether each registered toolset's newest snapshot restores, as its last check found; check now. */
export default function CrossToolset() {
  const [changes, setChanges] = useState(0);
  const changed = () => setChanges((n) => n + 1);
  const state = useQuery(loadCrossToolset, [changes]);
  const check = useAction(checkToolsets);
  const [checking, setChecking] = useState<string | null>(null);
  const [throttled, setThrottled] = useState<string | null>(null);

  const onCheck = async (toolset: string | null) => {
    setChecking(toolset ?? 'every toolset');
    setThrottled(null);
    const answer = await check.execute(toolset);
    setChecking(null);
    if (answer) {
      if (answer.throttled.length > 0) setThrottled(answer.throttled.map((t) => `${t.toolset} (again in ${t.retryAfterSec} s)`).join(', '));
      changed();
    }
  };

  return (
    <>
      <div className="page-head">
        <h1>Cross-toolset restore</h1>
        <Can scope="write:alerts">
          <button type="button" className="primary" disabled={check.busy} onClick={() => void onCheck(null)}>
            Check every toolset now
          </button>
        </Can>
      </div>
      {check.busy && <Busy label={`Asking ${checking}: each restores its newest snapshot and answers…`} />}
      {check.error && <ErrorNote error={check.error} />}
      {throttled && <p className="muted" role="status">Not asked, checked too recently: {throttled}.</p>}
      <Panel
        title="Last checks"
        state={state}
        minHeight={160}
        isEmpty={(d) => d.totalToolsets === 0}
        empty="No toolsets registered yet: register one below, then check it."
      >
        {(d) => (
          <>
            <p>
              Overall <OutcomeBadge outcome={d.overall} /> — {d.counts.ok} ok, {d.counts.drift} drift, {d.counts.error} error, {d.counts.skipped} skipped of {d.totalToolsets}.
            </p>
            <DataTable
              caption="Cross-toolset restore, one row per toolset"
              rows={d.rows}
              rowKey={(r) => r.toolset}
              columns={[
                { key: 'toolset', label: 'Toolset', sortValue: (r) => r.toolset, render: (r) => <code>{r.toolset}</code> },
                { key: 'badge', label: 'Badge', sortValue: (r) => r.badge, render: (r) => <OutcomeBadge outcome={r.badge} /> },
                { key: 'outcome', label: 'Outcome', sortValue: (r) => r.outcome },
                { key: 'database', label: 'Database', sortValue: (r) => r.database },
                { key: 'latestSnapshotAt', label: 'Newest snapshot', sortValue: (r) => r.latestSnapshotAt, render: (r) => <Time at={r.latestSnapshotAt} /> },
                { key: 'lastVerifiedAt', label: 'Last verified', sortValue: (r) => r.lastVerifiedAt, render: (r) => <Time at={r.lastVerifiedAt} /> },
                { key: 'checkedAt', label: 'Checked', sortValue: (r) => r.checkedAt, render: (r) => <Time at={r.checkedAt} /> },
                { key: 'reason', label: 'Why not ok', render: (r) => (r.errorText ? <span className="why">{`${r.errorText} (${r.reason})`}</span> : <span className="muted">—</span>) },
                {
                  key: 'check',
                  label: 'Check',
                  render: (r) => (
                    <Can scope="write:alerts">
                      <button type="button" disabled={check.busy} onClick={() => void onCheck(r.toolset)} aria-label={`Check ${r.toolset} now`}>
                        Check now
                      </button>
                    </Can>
                  ),
                },
              ]}
            />
          </>
        )}
      </Panel>
      <ToolsetsPanel refreshKey={changes} onChanged={changed} />
      <RegisterToolsetForm onSaved={changed} />
    </>
  );
}
