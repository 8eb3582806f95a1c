import { Link } from 'react-router';
import { DataTable, Time } from '../../../components';
import type { Proposal } from './api';
import { kindText, ProposalLink, proposalHref, StatusBadge } from './labels';

/** The inbox's list: ticks for bulk decisions, and each pending proposal's Accept and Reject. */
export function ProposalTable({
  rows,
  selected,
  onToggle,
  onDecide,
}: {
  rows: readonly Proposal[];
  selected: ReadonlySet<string>;
  onToggle: (id: string) => void;
  /** null: the operator may not decide (no write:alerts), or a decision is running. */
  onDecide: ((row: Proposal, accept: boolean) => void) | null;
}) {
  return (
    <DataTable
      caption="Proposals, newest first"
      rows={rows}
      rowKey={(r) => r.id}
      pageSize={rows.length || 1}
      columns={[
        {
          key: 'select',
          label: 'Select',
          render: (r) =>
            r.status === 'pending' ? (
              <input type="checkbox" aria-label={`Select ${r.title}`} checked={selected.has(r.id)} onChange={() => onToggle(r.id)} />
            ) : null,
        },
        {
          key: 'title',
          label: 'Proposal',
          sortValue: (r) => r.title,
          render: (r) => (
            <>
              <ProposalLink proposal={r} />
              <div className="muted small">{r.agentVersion}</div>
            </>
          ),
        },
        { key: 'kind', label: 'Kind', sortValue: (r) => r.kind, render: (r) => kindText(r.kind) },
        { key: 'toolset', label: 'Toolset', sortValue: (r) => r.toolset, render: (r) => r.toolset ?? <span className="muted">fleet</span> },
        { key: 'severity', label: 'Severity', sortValue: (r) => severityOf(r), render: (r) => severityOf(r) ?? <span className="muted">—</span> },
        { key: 'status', label: 'Status', sortValue: (r) => r.status, render: (r) => <StatusBadge status={r.status} /> },
        { key: 'evidence', label: 'Evidence', align: 'right', sortValue: (r) => r.evidenceEventIds.length, render: (r) => r.evidenceEventIds.length },
        { key: 'createdAt', label: 'Proposed', sortValue: (r) => r.createdAt, render: (r) => <Time at={r.createdAt} /> },
        {
          key: 'actions',
          label: 'Actions',
          render: (r) => (
            <span className="row-actions">
              <Link to={proposalHref(r.id)} aria-label={`Open ${r.title}`}>
                Open
              </Link>
              {onDecide && r.status === 'pending' && r.kind !== 'alert-rule' && (
                <>
                  <button type="button" onClick={() => onDecide(r, true)} aria-label={`Accept ${r.title}`}>
                    Accept
                  </button>
                  <button type="button" className="danger" onClick={() => onDecide(r, false)} aria-label={`Reject ${r.title}`}>
                    Reject
                  </button>
                </>
              )}
            </span>
          ),
        },
      ]}
    />
  );
}

function severityOf(p: Proposal): string | null {
  const severity = p.payload?.severity;
  return typeof severity === 'string' ? severity : null;
}
