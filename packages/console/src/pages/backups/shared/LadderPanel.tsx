import { useQuery } from '../../../app/useQuery';
import { DataTable, Panel, Time } from '../../../components';
import { loadLadder, OutcomeBadge } from './api';
import './backups.css';

/** Restore verifications of the last 30 days, and per database how long since the last ok one. */
export function LadderPanel({ refreshKey }: { refreshKey: number }) {
  const state = useQuery(() => loadLadder(30), [refreshKey]);
  return (
    <Panel title="Restore verification ladder (30 days)" state={state} minHeight={200}>
      {(d) => (
        <>
          {d.databases.length === 0 ? (
            <p className="empty">No restore verification yet: verify a snapshot above, or wait for the backup-verify job.</p>
          ) : (
            <div className="kpis">
              {d.databases.map((db) => (
                <div key={db.database} className="kpi">
                  <div className="value">{db.hoursSinceLastOk === null ? 'never ok' : `${db.hoursSinceLastOk} h`}</div>
                  <div className="label">
                    <code>{db.database}</code>: since the last ok restore ({db.totals30d.ok} ok, {db.totals30d.drift} drift, {db.totals30d.error} error in 30 days)
                  </div>
                </div>
              ))}
            </div>
          )}
          <DataTable
            caption="Restore verifications, newest first"
            rows={d.rows}
            rowKey={(v) => v.id}
            empty="No verifications in this window."
            initialSort={{ key: 'verifiedAt', direction: 'desc' }}
            columns={[
              { key: 'verifiedAt', label: 'Verified', sortValue: (v) => v.verifiedAt, render: (v) => <Time at={v.verifiedAt} /> },
              { key: 'database', label: 'Database', sortValue: (v) => v.database },
              { key: 'takenAt', label: 'Snapshot taken', sortValue: (v) => v.takenAt, render: (v) => <Time at={v.takenAt} /> },
              { key: 'outcome', label: 'Outcome', sortValue: (v) => v.outcome, render: (v) => <OutcomeBadge outcome={v.outcome} /> },
              { key: 'durationMs', label: 'Took', align: 'right', sortValue: (v) => v.durationMs, render: (v) => `${(v.durationMs / 1000).toFixed(1)} s` },
              { key: 'trigger', label: 'Trigger', sortValue: (v) => v.trigger },
              { key: 'errorText', label: 'Why not ok', render: (v) => (v.errorText ? <span className="why">{v.errorText}</span> : <span className="muted">—</span>) },
            ]}
          />
        </>
      )}
    </Panel>
  );
}
