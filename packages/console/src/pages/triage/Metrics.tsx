import { useQuery } from '../../app/useQuery';
import { DataTable, Panel, Time } from '../../components';
import { readMetrics } from './shared/api';
import { BudgetPanel } from './shared/BudgetPanel';
import { duration, pct, TrustBadge } from './shared/labels';
import './triage.css';

const pctOf = (value: number | null) => (value === null ? '—' : `${value.toFixed(1)}%`);

/** How far the agents are trusted (per agent and version, last 30 days), their versions, and the model budget. */
export default function Metrics() {
  const metrics = useQuery(readMetrics, [], { refreshMs: 60_000 });
  return (
    <div className="triage-page">
      <div className="page-head">
        <h1>Triage metrics and budget</h1>
      </div>
      <Panel
        title="Agent trust"
        state={metrics}
        minHeight={200}
        isEmpty={(d) => d.agents.length === 0}
        empty="No proposals in the last 30 days, so nothing to measure yet. Run an agent on the Runs page."
      >
        {(d) => (
          <>
            <p className="muted">
              Over the proposals of the last {d.windowDays} days. Badge: green from 60% accepted, yellow from 30%, red below, unknown under 5 decisions.
            </p>
            <DataTable
              caption="Per agent and version"
              rows={d.agents}
              rowKey={(a) => a.agentVersion}
              initialSort={{ key: 'agentVersion', direction: 'asc' }}
              columns={[
                { key: 'agentVersion', label: 'Agent', sortValue: (a) => a.agentVersion, render: (a) => <>{a.agentVersion}{a.active ? '' : <span className="muted"> (inactive)</span>}</> },
                { key: 'badge', label: 'Trust', sortValue: (a) => a.badge, render: (a) => <TrustBadge badge={a.badge} /> },
                { key: 'proposals', label: 'Proposals', align: 'right', sortValue: (a) => a.proposals },
                { key: 'pending', label: 'Pending', align: 'right', sortValue: (a) => a.pending },
                { key: 'accepted', label: 'Accepted', align: 'right', sortValue: (a) => a.accepted },
                { key: 'rejected', label: 'Rejected', align: 'right', sortValue: (a) => a.rejected },
                { key: 'autoRejected', label: 'Auto-rejected', align: 'right', sortValue: (a) => a.autoRejected },
                { key: 'acceptedRate', label: 'Accepted rate', align: 'right', sortValue: (a) => a.acceptedRate, render: (a) => pct(a.acceptedRate) },
                { key: 'precisionPct', label: 'Precision', align: 'right', sortValue: (a) => a.precisionPct, render: (a) => pctOf(a.precisionPct) },
                { key: 'recallPct', label: 'Recall', align: 'right', sortValue: (a) => a.recallPct, render: (a) => pctOf(a.recallPct) },
                { key: 'mttd', label: 'Time to decision', align: 'right', sortValue: (a) => a.meanTimeToDecisionSec, render: (a) => duration(a.meanTimeToDecisionSec) },
                { key: 'decided24h', label: 'Decided (24 h)', align: 'right', sortValue: (a) => a.decided24h, render: (a) => `${a.decided24h} (${pct(a.acceptedRate24h)})` },
              ]}
            />
            <h3>Versions</h3>
            <DataTable
              caption="Each agent's active version, and the watch's rollbacks"
              rows={d.versions}
              rowKey={(v) => v.agent}
              empty="No versions recorded yet."
              columns={[
                { key: 'agent', label: 'Agent', sortValue: (v) => v.agent },
                { key: 'activeVersion', label: 'Active', sortValue: (v) => v.activeVersion },
                { key: 'previousVersion', label: 'Previous', render: (v) => v.previousVersion ?? <span className="muted">—</span> },
                {
                  key: 'changeReason',
                  label: 'Why',
                  sortValue: (v) => v.changeReason,
                  render: (v) => (v.changeReason === 'rollback' ? <span className="badge warn">rolled back from {v.rolledBackFrom}</span> : 'deploy'),
                },
                { key: 'changedAt', label: 'Since', sortValue: (v) => v.changedAt, render: (v) => <Time at={v.changedAt} /> },
              ]}
            />
          </>
        )}
      </Panel>
      <BudgetPanel />
    </div>
  );
}
