import { useState } from 'react';
import { Link } from 'react-router';
import { useAction, useQuery } from '../../app/useQuery';
import { Can } from '../../auth/session';
import { Field, Form, Panel, Time } from '../../components';
import { type Freeze as FreezeSwitch, loadFreeze, setFreeze } from './shared/api';
import { FreezeState } from './shared/badges';
import './shared/chaos.css';

/** Freezes chaos with a reason (a run in progress is aborted), or thaws it. */
function FreezeForm({ freeze, onChanged }: { freeze: FreezeSwitch; onChanged: (freeze: FreezeSwitch) => void }) {
  const [reason, setReason] = useState('');
  const change = useAction(setFreeze);
  const freezing = !freeze.frozen;
  const onSubmit = async () => {
    const answer = await change.execute(freezing, reason.trim());
    if (answer) {
      setReason('');
      onChanged(answer.freeze);
    }
  };
  return (
    <Form
      label={freezing ? 'Freeze chaos' : 'Thaw chaos'}
      submitLabel={freezing ? 'Freeze' : 'Thaw'}
      busyLabel={freezing ? 'Freezing…' : 'Thawing…'}
      busy={change.busy}
      error={change.error}
      onSubmit={() => void onSubmit()}
    >
      {freezing ? (
        <Field label="Reason" hint="Why chaos stops: shown on the chaos pages, kept in the audit record. A run in progress is aborted with it.">
          <textarea value={reason} onChange={(e) => setReason(e.target.value)} rows={2} maxLength={500} required />
        </Field>
      ) : (
        <Field label="Reason for thawing" hint="Optional; kept in the audit record.">
          <textarea value={reason} onChange={(e) => setReason(e.target.value)} rows={2} maxLength={500} />
        </Field>
      )}
    </Form>
  );
}

/** The freeze switch: whether chaos may run, why not, who set it and when; freeze and thaw. */
export default function Freeze() {
  const [changes, setChanges] = useState(0);
  const state = useQuery(loadFreeze, [changes], { refreshMs: 60_000 });
  const [done, setDone] = useState<string | null>(null);
  return (
    <>
      <div className="page-head">
        <h1>Chaos freeze</h1>
        <div className="toolbar">
          <Link to="/chaos/experiments">Experiments</Link>
          <Link to="/chaos/runs">Runs</Link>
        </div>
      </div>
      {done && (
        <p className="badge ok" role="status" data-testid="done">
          {done}
        </p>
      )}
      <Panel title="The switch" state={state} minHeight={160}>
        {({ freeze }) => (
          <>
            <dl className="facts" aria-label="Freeze state">
              <dt>State</dt>
              <dd data-testid="freeze-state">
                <FreezeState frozen={freeze.frozen} />
              </dd>
              <dt>Reason</dt>
              <dd data-testid="freeze-reason" className="summary">
                {freeze.reason || <span className="muted">none given</span>}
              </dd>
              <dt>Set by</dt>
              <dd data-testid="freeze-by">{freeze.updatedBy ?? <span className="muted">nobody yet</span>}</dd>
              <dt>Since</dt>
              <dd data-testid="freeze-at">
                <Time at={freeze.updatedAt} />
              </dd>
            </dl>
            <p className="muted">
              {freeze.frozen
                ? 'While frozen, the schedule starts no experiment and Run now is refused.'
                : 'Not frozen: the schedule may run an eligible experiment (active, past its cooldown, blast radius allowed, no open critical drift). Freezing stops that at once and aborts a run in progress.'}
            </p>
            <Can scope="write:alerts">
              <FreezeForm
                key={String(freeze.frozen)}
                freeze={freeze}
                onChanged={(next) => {
                  setDone(next.frozen ? 'Chaos frozen.' : 'Chaos thawed.');
                  setChanges((n) => n + 1);
                }}
              />
            </Can>
          </>
        )}
      </Panel>
    </>
  );
}
