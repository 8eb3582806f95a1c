import { useMemo, useState } from 'react';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { Can, useSession } from '../../auth/session';
import { Busy, Panel } from '../../components';
import { listProposals, type Proposal, PROPOSAL_KINDS, type ProposalKind, type ProposalStatusFilter, STATUS_FILTERS } from './shared/api';
import { InboxFilters } from './shared/InboxFilters';
import { ProposalTable } from './shared/ProposalTable';
import { DecisionBar } from './shared/DecisionBar';
import { decideMany, type Outcome } from './shared/decisions';
import { OutcomeNote } from './shared/OutcomeNote';
import { SavedViews } from './shared/SavedViews';
import './triage.css';

const PAGE = 50;

/**
 * The proposals inbox: the agents' proposals filtered by kind, status and toolset (in the
 * address), accepted or rejected one by one or selected in bulk, and the saved views that accepted
 * investigations made.
 */
export default function Inbox() {
  const { get, set } = useUrlState();
  const kind = (PROPOSAL_KINDS as string[]).includes(get('kind')) ? (get('kind') as ProposalKind) : undefined;
  const status = (STATUS_FILTERS as string[]).includes(get('status')) ? (get('status') as ProposalStatusFilter) : 'pending';
  const toolset = get('toolset');
  const before = get('before');
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [busy, setBusy] = useState<string | null>(null);
  /** The last decision's outcomes, shown above the list (the decision bar goes when nothing is pending). */
  const [result, setResult] = useState<{ outcomes: Outcome[]; verb: 'accepted' | 'rejected' } | null>(null);
  const canDecide = useSession().can('write:alerts');

  const list = useQuery(
    () => listProposals({ status, limit: PAGE, ...(kind ? { kind } : {}), ...(toolset ? { toolset } : {}), ...(before ? { cursor: before } : {}) }),
    [kind, status, toolset, before],
    { refreshMs: 60_000 },
  );
  const rows = useMemo(() => list.data?.proposals ?? [], [list.data]);
  const chosen = useMemo(() => rows.filter((r) => selected.has(r.id) && r.status === 'pending'), [rows, selected]);
  const pending = rows.filter((r) => r.status === 'pending');
  const nextCursor = list.data?.nextCursor ?? null;

  const toggle = (id: string) =>
    setSelected((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  // One proposal's Accept or Reject in its row; a rule proposal is accepted on its own page, with its destination.
  const decideOne = async (row: Proposal, accept: boolean) => {
    setResult(null);
    setBusy(`${accept ? 'Accepting' : 'Rejecting'} “${row.title}”…`);
    const outcomes = await decideMany([row], accept, { destination: 'Accept a rule proposal on its own page, with a destination.', notes: '' });
    setBusy(null);
    setResult({ outcomes, verb: accept ? 'accepted' : 'rejected' });
    list.reload();
  };
  const filter = (changes: Record<string, string | null>) => {
    setSelected(new Set());
    set({ ...changes, before: null });
  };

  return (
    <div className="triage-page">
      <div className="page-head">
        <h1>Triage inbox</h1>
        <InboxFilters kind={kind} status={status} toolset={toolset} onFilter={filter} />
      </div>

      {pending.length > 0 && (
        <Can scope="write:alerts">
          <section className="panel">
            <h2>Decide the selected proposals</h2>
            <label className="check">
              <input
                type="checkbox"
                checked={pending.every((r) => selected.has(r.id))}
                onChange={(e) => setSelected(e.target.checked ? new Set(pending.map((r) => r.id)) : new Set())}
              />{' '}
              Select every pending proposal listed ({pending.length})
            </label>
            <DecisionBar
              bulk
              label="Decide the selected proposals"
              rows={chosen}
              onDecided={(outcomes, verb) => {
                setResult({ outcomes, verb });
                setSelected(new Set());
                list.reload();
              }}
            />
            {chosen.length === 0 && <p className="muted">Tick pending proposals in the list below, then accept or reject them together.</p>}
          </section>
        </Can>
      )}

      <div className="decision-result" aria-live="polite">
        {busy && <Busy label={busy} />}
        {result && <OutcomeNote outcomes={result.outcomes} verb={result.verb} />}
      </div>
      <Panel
        title="Proposals"
        state={list}
        minHeight={240}
        isEmpty={(d) => d.proposals.length === 0}
        empty={
          status === 'pending'
            ? 'No pending proposals. The agents propose every 15 minutes (job triage-pass), or start a run on the Runs page.'
            : 'No proposals match these filters: widen the status or kind, or clear the toolset.'
        }
        actions={
          <span className="row-actions">
            {before && (
              <button type="button" onClick={() => set({ before: null })}>
                Newest
              </button>
            )}
            {nextCursor && (
              <button type="button" onClick={() => set({ before: nextCursor })}>
                Older
              </button>
            )}
          </span>
        }
      >
        {(d) => <ProposalTable rows={d.proposals} selected={selected} onToggle={toggle} onDecide={canDecide && !busy ? decideOne : null} />}
      </Panel>

      <SavedViews />
    </div>
  );
}
