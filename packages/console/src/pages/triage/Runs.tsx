import { useState } from 'react';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { Can } from '../../auth/session';
import { DataTable, Panel, Time } from '../../components';
import { listInvestigations, listRuleProposals, type ProposalStatusFilter, STATUS_FILTERS } from './shared/api';
import { duration, ProposalLink, StatusBadge } from './shared/labels';
import { RunForms } from './shared/RunForms';
import { RunReplay } from './shared/RunReplay';
import './triage.css';

/**
 * Triage runs: start the classifier, the investigation proposer or the rule proposer; the
 * investigation and rule proposals they made; a run's replay (`?run=`).
 */
export default function Runs() {
  const { get, set } = useUrlState();
  const status = (STATUS_FILTERS as string[]).includes(get('status')) ? (get('status') as ProposalStatusFilter) : 'pending';
  const runId = get('run');
  const [generation, setGeneration] = useState(0);
  const investigations = useQuery(() => listInvestigations({ status, limit: 50 }), [status]);
  const rules = useQuery(() => listRuleProposals({ status, limit: 50 }), [status]);

  return (
    <div className="triage-page">
      <div className="page-head">
        <h1>Triage runs</h1>
        <label className="field inline">
          <span className="field-label">Proposals shown</span>
          <select aria-label="Proposals shown" value={status} onChange={(e) => set({ status: e.target.value === 'pending' ? null : e.target.value })}>
            {STATUS_FILTERS.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Can scope="write:alerts">
        <RunForms
          onRan={() => {
            investigations.reload();
            rules.reload();
            setGeneration((n) => n + 1);
          }}
          onReplay={(id) => set({ run: id })}
        />
      </Can>
      <RunReplay runId={runId} onRunId={(id) => set({ run: id })} generation={generation} />
      <Panel
        title="Investigation proposals"
        state={investigations}
        minHeight={140}
        isEmpty={(d) => d.proposals.length === 0}
        empty="No investigation proposals with this status. The investigation proposer runs after each triage pass, or start it above."
      >
        {(d) => (
          <DataTable
            caption="Investigation proposals, newest first"
            rows={d.proposals}
            rowKey={(p) => p.id}
            columns={[
              { key: 'title', label: 'Investigation', sortValue: (p) => p.title, render: (p) => <ProposalLink proposal={p} /> },
              { key: 'toolset', label: 'Toolset', sortValue: (p) => p.toolset, render: (p) => p.toolset ?? <span className="muted">fleet</span> },
              { key: 'status', label: 'Status', sortValue: (p) => p.status, render: (p) => <StatusBadge status={p.status} /> },
              { key: 'evidence', label: 'Evidence', align: 'right', sortValue: (p) => p.evidenceEventIds.length, render: (p) => p.evidenceEventIds.length },
              { key: 'createdAt', label: 'Proposed', sortValue: (p) => p.createdAt, render: (p) => <Time at={p.createdAt} /> },
            ]}
          />
        )}
      </Panel>
      <Panel
        title="Rule proposals"
        state={rules}
        minHeight={140}
        isEmpty={(d) => d.proposals.length === 0}
        empty="No rule proposals with this status. The rule proposer runs daily at 04:30 UTC, or start it above."
      >
        {(d) => (
          <DataTable
            caption="Rule proposals with their backtests, newest first"
            rows={d.proposals}
            rowKey={(p) => p.id}
            columns={[
              { key: 'title', label: 'Rule', sortValue: (p) => p.title, render: (p) => <ProposalLink proposal={p} /> },
              { key: 'status', label: 'Status', sortValue: (p) => p.status, render: (p) => <StatusBadge status={p.status} /> },
              { key: 'TP', label: 'True alarms', align: 'right', sortValue: (p) => p.backtest?.TP, render: (p) => p.backtest?.TP ?? '—' },
              { key: 'FP', label: 'False alarms', align: 'right', sortValue: (p) => p.backtest?.FP, render: (p) => p.backtest?.FP ?? '—' },
              {
                key: 'caught',
                label: 'Caught',
                align: 'right',
                sortValue: (p) => p.backtest?.caught,
                render: (p) => (p.backtest ? `${p.backtest.caught} of ${p.backtest.incidents}` : '—'),
              },
              { key: 'lead', label: 'Lead time', align: 'right', sortValue: (p) => p.backtest?.meanLeadTimeSec, render: (p) => duration(p.backtest?.meanLeadTimeSec) },
              { key: 'createdAt', label: 'Proposed', sortValue: (p) => p.createdAt, render: (p) => <Time at={p.createdAt} /> },
            ]}
          />
        )}
      </Panel>
    </div>
  );
}
