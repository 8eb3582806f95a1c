import { useCallback, useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../../api/client';
import { useAction, useQuery } from '../../../app/useQuery';
import { Can } from '../../../auth/session';
import { Busy, ErrorNote, Field, Panel, Time } from '../../../components';
import { IncidentStatus, Severity } from './badges';
import { IncidentNote } from './IncidentNote';
import './empire.css';

type Move = 'acknowledged' | 'resolved';

/** One incident: what it is about, its events (each to its lineage), and the moves it still allows. */
export function IncidentDetail({ id, onClose }: { id: string; onClose: () => void }) {
  const state = useQuery(() => unwrap(api.GET('/api/observatory/v1/empire/incidents/{id}', { params: { path: { id } } })), [id]);
  return (
    <Panel
      title="Incident"
      state={state}
      minHeight={260}
      actions={
        <button type="button" onClick={onClose}>
          Close
        </button>
      }
    >
      {(d) => (
        <div className="incident">
          <h3>{d.incident.title}</h3>
          <dl className="facts">
            <dt>Status</dt>
            <dd>
              <IncidentStatus status={d.incident.status} />
            </dd>
            <dt>Severity</dt>
            <dd>
              <Severity severity={d.incident.severity} />
            </dd>
            <dt>Toolset</dt>
            <dd>
              <Link to={`/empire/toolset?toolset=${encodeURIComponent(d.incident.toolset)}`}>{d.incident.toolset}</Link>
            </dd>
            <dt>Opened by</dt>
            <dd>{d.incident.source}</dd>
            <dt>Opened</dt>
            <dd>
              <Time at={d.incident.openedAt} />
            </dd>
            <dt>Resolved</dt>
            <dd>
              <Time at={d.incident.resolvedAt} />
            </dd>
          </dl>
          <IncidentMoves id={id} status={d.incident.status} onMoved={state.reload} />
          <h4>Events ({d.incident.eventIds.length})</h4>
          {d.incident.eventIds.length === 0 ? (
            <p className="empty">It names no events.</p>
          ) : (
            <ul className="event-ids">
              {d.incident.eventIds.map((eventId) => (
                <li key={eventId}>
                  <Link to={`/empire/lineage?event=${encodeURIComponent(eventId)}`} title="Open its lineage">
                    <code>{eventId}</code>
                  </Link>
                </li>
              ))}
            </ul>
          )}
          <details>
            <summary>Details as recorded</summary>
            <pre>{JSON.stringify(d.incident.details, null, 2)}</pre>
          </details>
          <Can scope="read:events">
            <IncidentNote incidentId={id} />
          </Can>
        </div>
      )}
    </Panel>
  );
}

/** Acknowledge and resolve: open → acknowledged → resolved, or open → resolved; resolved is final. */
function IncidentMoves({ id, status, onMoved }: { id: string; status: string; onMoved: () => void }) {
  const [notes, setNotes] = useState('');
  const move = useAction(
    useCallback(
      (to: Move) =>
        unwrap(api.POST('/api/observatory/v1/empire/incidents/{id}', { params: { path: { id } }, body: { status: to, ...(notes.trim() ? { notes: notes.trim() } : {}) } })),
      [id, notes],
    ),
  );
  if (status === 'resolved') return <p className="muted">Resolved incidents are final.</p>;
  const run = async (to: Move) => {
    if ((await move.execute(to)) !== null) {
      setNotes('');
      onMoved();
    }
  };
  return (
    <Can scope="write:alerts">
      <div className="incident-moves">
        <Field label="Notes for the audit log" hint="Optional; kept with the change in the operator audit.">
          <input value={notes} onChange={(e) => setNotes(e.target.value)} maxLength={2000} />
        </Field>
        <div className="toolbar">
          {status === 'open' && (
            <button type="button" disabled={move.busy} onClick={() => void run('acknowledged')}>
              Acknowledge
            </button>
          )}
          <button type="button" className="primary" disabled={move.busy} onClick={() => void run('resolved')}>
            Resolve
          </button>
          {move.busy && <Busy label="Saving…" />}
        </div>
        {move.error && <ErrorNote error={move.error} />}
      </div>
    </Can>
  );
}
