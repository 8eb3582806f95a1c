import { useState } from 'react';
import { Link } from 'react-router';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { Can } from '../../auth/session';
import { Panel, Time } from '../../components';
import { type Proposal as ProposalView, readProposal } from './shared/api';
import { DecisionBar } from './shared/DecisionBar';
import type { Outcome } from './shared/decisions';
import { OutcomeNote } from './shared/OutcomeNote';
import { kindText, postmortemHref, replayHref, StatusBadge } from './shared/labels';
import { ProposalPayload } from './shared/ProposalPayload';
import './triage.css';

/** One proposal (`?id=`): what the agent proposed and on what evidence, its decision, and Accept / Reject while pending. */
export default function Proposal() {
  const { get } = useUrlState();
  const id = get('id');
  const state = useQuery(() => readProposal(id), [id], { enabled: id !== '' });
  if (!id) {
    return (
      <section className="panel">
        <h1>Proposal</h1>
        <p className="empty">
          No proposal named in the address. Open one from the <Link to="/empire/triage">inbox</Link>.
        </p>
      </section>
    );
  }
  return (
    <div className="triage-page">
      <div className="page-head">
        <h1>{state.data ? state.data.proposal.title : 'Proposal'}</h1>
        <Link to="/empire/triage">Back to the inbox</Link>
      </div>
      <Panel state={state} minHeight={300}>
        {({ proposal }) => (
          <div className="proposal">
            <Details proposal={proposal} onDecided={state.reload} />
          </div>
        )}
      </Panel>
    </div>
  );
}

function Details({ proposal: p, onDecided }: { proposal: ProposalView; onDecided: () => void }) {
  // The decision bar goes once the proposal is decided, so its outcome is shown here.
  const [outcome, setOutcome] = useState<{ outcomes: Outcome[]; verb: 'accepted' | 'rejected' } | null>(null);
  return (
    <>
      {outcome && <OutcomeNote outcomes={outcome.outcomes} verb={outcome.verb} />}
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={p.status} />
          {p.autoRejectReason && <span className="muted"> {p.autoRejectReason}</span>}
        </dd>
        <dt>Kind</dt>
        <dd>{kindText(p.kind)}</dd>
        <dt>Toolset</dt>
        <dd>{p.toolset ?? <span className="muted">fleet</span>}</dd>
        <dt>Agent</dt>
        <dd>{p.agentVersion}</dd>
        <dt>Run</dt>
        <dd>
          <Link to={replayHref(p.runId)}>
            <code>{p.runId}</code> (replay)
          </Link>
        </dd>
        <dt>Window</dt>
        <dd>
          {p.windowStart ? (
            <>
              <Time at={p.windowStart} /> – <Time at={p.windowEnd} />
            </>
          ) : (
            <span className="muted">—</span>
          )}
        </dd>
        {p.focalEventId && (
          <>
            <dt>Focal event</dt>
            <dd>
              <code>{p.focalEventId}</code>
            </dd>
          </>
        )}
        <dt>Proposed</dt>
        <dd>
          <Time at={p.createdAt} />
        </dd>
        {p.decidedAt && (
          <>
            <dt>Decided</dt>
            <dd>
              <Time at={p.decidedAt} /> by {p.decidedBy ?? 'the service'}
              {p.decisionNotes && <> — “{p.decisionNotes}”</>}
            </dd>
          </>
        )}
        {p.openedIncidentId && (
          <>
            <dt>Opened incident</dt>
            <dd>
              <code>{p.openedIncidentId}</code> · <Link to={postmortemHref(p.openedIncidentId)}>its postmortem</Link>
            </dd>
          </>
        )}
        {p.createdSavedViewId && (
          <>
            <dt>Saved view</dt>
            <dd>
              <code>{p.createdSavedViewId}</code> (listed under Saved views in the <Link to="/empire/triage">inbox</Link>)
            </dd>
          </>
        )}
        {p.createdAlertRuleId && (
          <>
            <dt>Alert rule</dt>
            <dd>
              <code>{p.createdAlertRuleId}</code>
            </dd>
          </>
        )}
      </dl>
      {p.status === 'pending' && (
        <Can scope="write:alerts">
          <section className="panel">
            <h2>Decide</h2>
            <DecisionBar
              label="Decide this proposal"
              rows={[p]}
              onDecided={(outcomes, verb) => {
                setOutcome({ outcomes, verb });
                onDecided();
              }}
            />
          </section>
        </Can>
      )}
      <ProposalPayload proposal={p} />
      <section>
        <h2>Evidence ({p.evidenceEventIds.length} events)</h2>
        {p.evidenceEventIds.length === 0 ? (
          <p className="muted">This proposal cites no events{p.kind === 'alert-rule' ? ': a rule rests on its backtest.' : '.'}</p>
        ) : (
          <ul className="ids">
            {p.evidenceEventIds.map((e) => (
              <li key={e}>
                <code>{e}</code>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
