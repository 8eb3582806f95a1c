import { useEffect, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { DataTable, ErrorNote, Field, Form, Panel, Time } from '../../components';
import { ReplayLink } from './shared/links';
import { TenantPicker } from './shared/TenantPicker';
import './shared/honeypot.css';

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * Replays one stored event: re-derives its fingerprint and verdict with today's registry and shows
 * what differs. Below, the newest stored envelopes to pick one from.
 */
export default function Replay() {
  const { get, set } = useUrlState();
  const eventId = get('eventId');
  const tenant = get('tenant');
  const valid = UUID.test(eventId);
  const [draft, setDraft] = useState(eventId);
  useEffect(() => setDraft(eventId), [eventId]);
  const result = useQuery(
    () => unwrap(api.GET('/api/observatory/v1/honeypot/replay', { params: { query: { eventId, limit: 20, ...(tenant ? { tenant } : {}) } } })),
    [eventId, tenant],
    { enabled: valid },
  );
  const list = useQuery(
    () => unwrap(api.GET('/api/observatory/v1/honeypot/replay', { params: { query: { list: '1', limit: 20, ...(tenant ? { tenant } : {}) } } })),
    [tenant],
  );
  return (
    <>
      <div className="page-head">
        <h1>Replay an event</h1>
        <div className="toolbar">
          <TenantPicker />
        </div>
      </div>
      <section className="panel">
        <Form label="Replay an event" submitLabel="Replay" busy={valid && result.loading} busyLabel="Replaying…" error={null} onSubmit={() => set({ eventId: draft.trim() || null })}>
          <Field label="Event id" hint="The event's id (a UUID), from Recent events, Investigate or the list below.">
            <input value={draft} onChange={(e) => setDraft(e.target.value)} required pattern="[0-9a-fA-F\-]{36}" spellCheck={false} autoComplete="off" />
          </Field>
        </Form>
      </section>
      {eventId && !valid && <ErrorNote error={{ status: 400, reason: 'invalid-event-id', human: `“${eventId}” is not an event id: it is a UUID (8-4-4-4-12 hex digits).` }} />}
      {valid && (
        <Panel title={<>Event <code>{eventId}</code></>} state={result} minHeight={160}>
          {(d) => (
            <>
              <p>
                {d.matches ? (
                  <span className="badge ok">matches</span>
                ) : (
                  <span className="badge bad">differs</span>
                )}{' '}
                {d.matches
                  ? `Replaying it gives the same ${d.compared.join(', ')} as stored.`
                  : `Replaying it with today's registry changes ${d.fields.length === 1 ? 'one field' : `${d.fields.length} fields`}.`}
              </p>
              {d.fields.length > 0 && (
                <DataTable
                  caption="Fields that differ"
                  rows={d.fields}
                  rowKey={(f) => f.field}
                  columns={[
                    { key: 'field', label: 'Field', render: (f) => <code>{f.field}</code> },
                    { key: 'stored', label: 'Stored', render: (f) => (f.stored === null ? <span className="muted">null</span> : <code>{f.stored}</code>) },
                    { key: 'replayed', label: 'Replayed', render: (f) => (f.replayed === null ? <span className="muted">null</span> : <code>{f.replayed}</code>) },
                  ]}
                />
              )}
              {d.envelope && (
                <dl className="facts" aria-label="Envelope">
                  <dt>Tenant</dt>
                  <dd>{d.envelope.sourceTenant}</dd>
                  <dt>Received</dt>
                  <dd>
                    <Time at={d.envelope.receivedAt} />
                  </dd>
                  <dt>Body</dt>
                  <dd>{d.envelope.bodyBytes.toLocaleString()} bytes, schema version {d.envelope.schemaVersion}</dd>
                </dl>
              )}
            </>
          )}
        </Panel>
      )}
      <Panel
        title="Newest stored envelopes"
        state={list}
        minHeight={160}
        isEmpty={(d) => (d.envelopes ?? []).length === 0}
        empty="No stored envelopes yet: events appear here once ingested."
      >
        {(d) => (
          <DataTable
            caption="Newest stored envelopes"
            rows={d.envelopes ?? []}
            rowKey={(e) => e.eventId}
            columns={[
              { key: 'eventId', label: 'Event', render: (e) => <ReplayLink eventId={e.eventId}>{e.eventId}</ReplayLink> },
              { key: 'sourceTenant', label: 'Tenant', sortValue: (e) => e.sourceTenant },
              { key: 'receivedAt', label: 'Received', sortValue: (e) => e.receivedAt, render: (e) => <Time at={e.receivedAt} /> },
              { key: 'bodyBytes', label: 'Bytes', align: 'right', sortValue: (e) => e.bodyBytes },
            ]}
          />
        )}
      </Panel>
    </>
  );
}
