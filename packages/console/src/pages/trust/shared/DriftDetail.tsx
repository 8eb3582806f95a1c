import { useState } from 'react';
import { useAction } from '../../../app/useQuery';
import { Can } from '../../../auth/session';
import { Field, Form, Time } from '../../../components';
import { Severity } from '../../empire/shared/badges';
import { ackDrift, type DriftEvent, RESOLVE_STATUSES, type ResolveStatus, resolveDrift } from './api';
import { DriftStatus } from './badges';

const HELD = new Set(['open', 'acknowledged']);

/**
 * One drift event: what was found, its payload, and the moves an operator makes on it. The
 * service holds the state table: a move it forbids (a finished event) comes back as 409 and its
 * message is shown here.
 */
export function DriftDetail({ event, onMoved, onClose }: { event: DriftEvent; onMoved: (event: DriftEvent, message: string) => void; onClose: () => void }) {
  const [ackNotes, setAckNotes] = useState('');
  const [status, setStatus] = useState<ResolveStatus>('resolved');
  const [notes, setNotes] = useState('');
  const ack = useAction(ackDrift);
  const resolve = useAction(resolveDrift);

  const onAck = async () => {
    resolve.clearError();
    const answer = await ack.execute(event.id, ackNotes.trim());
    if (answer) {
      setAckNotes('');
      onMoved(answer.event, `Event ${answer.event.id} ${answer.event.status}.`);
    }
  };
  const onResolve = async () => {
    ack.clearError();
    const answer = await resolve.execute(event.id, status, notes.trim());
    if (answer) {
      setNotes('');
      onMoved(answer.event, `Event ${answer.event.id} ${answer.event.status}.`);
    }
  };

  return (
    <section className="panel" role="region" aria-label={`Drift event ${event.id}`}>
      <header className="panel-head">
        <h2>
          {event.kind}: <DriftStatus status={event.status} /> <Severity severity={event.severity} />
        </h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </header>
      <p className="summary" data-testid="description">
        {event.description}
      </p>
      <dl className="facts">
        <dt>Source</dt>
        <dd>
          <code>{event.source}</code> <code className="hash">{event.sourceId}</code>
        </dd>
        <dt>Opened</dt>
        <dd>
          <Time at={event.openedAt} />
        </dd>
        <dt>Acknowledged</dt>
        <dd>{event.acknowledgedAt ? <Time at={event.acknowledgedAt} /> : <span className="muted">not yet</span>}</dd>
        <dt>Resolved</dt>
        <dd>
          {event.resolvedAt ? (
            <>
              <Time at={event.resolvedAt} /> by {event.resolvedBy ?? 'unknown'}
            </>
          ) : (
            <span className="muted">not yet</span>
          )}
        </dd>
        <dt>Resolution notes</dt>
        <dd data-testid="resolution-notes">{event.resolutionNotes || <span className="muted">none</span>}</dd>
      </dl>
      <details>
        <summary>What the detector found (JSON)</summary>
        <pre className="payload" data-testid="payload">
          {JSON.stringify(event.payload, null, 2)}
        </pre>
      </details>
      <Can scope="write:alerts">
        {!HELD.has(event.status) && <p className="muted">This event is finished ({event.status}): the service refuses further moves.</p>}
        <div className="drift-moves">
          <Form label={`Acknowledge ${event.id}`} onSubmit={() => void onAck()} busy={ack.busy} error={ack.error} submitLabel="Acknowledge">
            <Field label="Acknowledgement notes" hint="Kept in the audit record and the chained drift fact.">
              <textarea value={ackNotes} onChange={(e) => setAckNotes(e.target.value)} maxLength={2000} rows={2} />
            </Field>
          </Form>
          <Form label={`Resolve ${event.id}`} onSubmit={() => void onResolve()} busy={resolve.busy} error={resolve.error} submitLabel="Resolve">
            <Field label="Resolve as" hint="resolved: fixed by hand; auto-resolved: cleared mechanically; wont-fix: an expected divergence.">
              <select value={status} onChange={(e) => setStatus(e.target.value as ResolveStatus)}>
                {RESOLVE_STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Resolution notes">
              <textarea value={notes} onChange={(e) => setNotes(e.target.value)} maxLength={2000} rows={2} />
            </Field>
          </Form>
        </div>
      </Can>
    </section>
  );
}
