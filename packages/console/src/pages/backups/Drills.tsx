import { useState } from 'react';
import { useAction, useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { Can } from '../../auth/session';
import { Busy, DataTable, ErrorNote, Panel, Time } from '../../components';
import { type Drill, loadDrills, OutcomeBadge, runDrill } from './shared/api';
import { ResolveDrill } from './shared/ResolveDrill';
import './shared/backups.css';

const WEEKS = [4, 12, 52] as const;
const seconds = (s: number | null) => (s === null ? '—' : `${s.toLocaleString(undefined, { maximumFractionDigits: 1 })} s`);

/** Region failover drills: the list, run one now, resolve an error drill. */
export default function Drills() {
  const { get, set } = useUrlState();
  const weeks = (WEEKS as readonly number[]).includes(Number(get('weeks'))) ? Number(get('weeks')) : 12;
  const [changes, setChanges] = useState(0);
  const reload = () => setChanges((n) => n + 1);
  const state = useQuery(() => loadDrills(weeks), [weeks, changes]);
  const run = useAction(runDrill);
  const [skipped, setSkipped] = useState<string | null>(null);

  const onRun = async () => {
    setSkipped(null);
    const answer = await run.execute();
    if (answer) {
      if (answer.skipped) setSkipped(answer.skipReason ?? 'The drill was not run.');
      reload();
    }
  };

  const unresolvedError = (d: Drill) => d.outcome === 'error' && d.resolvedAt === null;

  return (
    <>
      <div className="page-head">
        <h1>Failover drills</h1>
        <div className="toolbar">
          <div className="segmented" role="group" aria-label="Weeks back">
            {WEEKS.map((w) => (
              <button key={w} type="button" aria-pressed={weeks === w} onClick={() => set({ weeks: String(w) })}>
                {w} weeks
              </button>
            ))}
          </div>
          <Can scope="write:alerts">
            <button type="button" className="primary" disabled={run.busy} onClick={() => void onRun()}>
              Run a drill now
            </button>
          </Can>
        </div>
      </div>
      {run.busy && <Busy label="Running a drill: restoring the newest snapshot into a scratch database, measuring recovery and a live write…" />}
      {run.error && <ErrorNote error={run.error} />}
      {skipped && (
        <p className="error-note" role="status">
          Not run: {skipped}
        </p>
      )}
      <Panel
        title="Drills"
        state={state}
        minHeight={220}
        isEmpty={(d) => d.drills.length === 0}
        empty="No drills in this window. The weekly job runs one on Monday 04:00 UTC; run one now to rehearse a restore."
      >
        {(d) => (
          <>
            <DataTable
              caption="Region failover drills, newest first"
              rows={d.drills}
              rowKey={(r) => r.id}
              initialSort={{ key: 'startedAt', direction: 'desc' }}
              columns={[
                { key: 'startedAt', label: 'Started', sortValue: (r) => r.startedAt, render: (r) => <Time at={r.startedAt} /> },
                { key: 'trigger', label: 'Region, trigger', sortValue: (r) => r.trigger, render: (r) => `${r.region}, ${r.actor ? `${r.trigger} (${r.actor})` : r.trigger}` },
                { key: 'outcome', label: 'Outcome', sortValue: (r) => r.outcome, render: (r) => <OutcomeBadge outcome={r.outcome} /> },
                { key: 'recoverySec', label: 'Recovery', align: 'right', sortValue: (r) => r.recoverySec, render: (r) => seconds(r.recoverySec) },
                {
                  key: 'dataLoss',
                  label: 'Data-loss window / target',
                  align: 'right',
                  sortValue: (r) => r.dataLossWindowSec,
                  render: (r) => `${seconds(r.dataLossWindowSec)} / ${seconds(r.dataLossTargetSec)}`,
                },
                { key: 'write', label: 'Live write', align: 'right', render: (r) => (r.writeRoundTripMs === null ? '—' : `${r.writeRoundTripMs.toFixed(1)} ms`) },
                { key: 'errorText', label: 'Why not ok', render: (r) => (r.errorText ? <span className="why">{r.errorText}</span> : <span className="muted">—</span>) },
                {
                  key: 'resolved',
                  label: 'Resolved',
                  render: (r) =>
                    r.resolvedAt ? (
                      <span className="why">
                        <Time at={r.resolvedAt} /> by {r.resolvedBy}
                        {r.resolveNote ? `: ${r.resolveNote}` : ''}
                      </span>
                    ) : (
                      <span className="muted">—</span>
                    ),
                },
              ]}
            />
            {d.drills.filter(unresolvedError).map((drill) => (
              <Can key={drill.id} scope="write:alerts">
                <section className="panel" aria-label={`Resolve the error drill of ${new Date(drill.startedAt).toISOString()}`}>
                  <h2>
                    Error drill of <Time at={drill.startedAt} /> is unresolved
                  </h2>
                  <p className="muted">While it is unresolved (24 hours), drills of region {drill.region} are refused. {drill.errorText}</p>
                  <ResolveDrill drill={drill} onResolved={reload} />
                </section>
              </Can>
            ))}
          </>
        )}
      </Panel>
    </>
  );
}
