import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { DataTable, Field, Panel, Time } from '../../components';
import { Badge } from './shared/badges';
import { ToolsetGate, ToolsetPicker, useToolsetChoice } from './shared/toolsets';
import { useSyncedText } from './shared/useSyncedText';
import './shared/empire.css';

/**
 * A toolset's stored events rebuilt from what was stored and admitted again: whether the hash,
 * size and admission come out as they did at ingest.
 */
export default function Replay() {
  const { get, set } = useUrlState();
  const { toolset, known, choosing } = useToolsetChoice();
  const eventId = get('event');
  const [text, setText] = useSyncedText(eventId);
  return (
    <>
      <div className="page-head">
        <h1>Replay{toolset ? ` of ${toolset}` : ''}</h1>
        <ToolsetPicker toolset={toolset} known={known} />
      </div>
      <section className="panel">
        <form
          className="toolbar"
          aria-label="Replay one event"
          onSubmit={(e) => {
            e.preventDefault();
            set({ event: text.trim() || null });
          }}
        >
          <Field label="Event" hint="The eventId ingest answered or the toolset's own id; empty lists the latest events.">
            <input value={text} onChange={(e) => setText(e.target.value)} size={38} spellCheck={false} />
          </Field>
          <button type="submit" className="primary">
            Replay
          </button>
        </form>
      </section>
      <ToolsetGate toolset={toolset} choosing={choosing} none="Type a toolset's name above: no toolset has sent events yet.">
        {eventId ? <ReplayOne toolset={toolset} eventId={eventId} /> : <ReplayList toolset={toolset} />}
      </ToolsetGate>
    </>
  );
}

function ReplayList({ toolset }: { toolset: string }) {
  const state = useQuery(() => unwrap(api.GET('/api/observatory/v1/empire/{toolset}/replay', { params: { path: { toolset }, query: { list: '1', limit: 50 } } })), [toolset]);
  return (
    <Panel title="Latest received, each replayed" state={state} minHeight={240} isEmpty={(d) => (d.envelopes ?? []).length === 0} empty={`${toolset} has no stored events to replay.`}>
      {(d) => (
        <>
          <p>{d.matches ? <Badge tone="ok">every one matches</Badge> : <Badge tone="bad">some differ</Badge>}</p>
          <DataTable
            caption="Replayed events"
            rows={d.envelopes ?? []}
            pageSize={50}
            rowKey={(r) => r.eventId}
            columns={[
              { key: 'id', label: 'Event', sortValue: (r) => r.id, render: (r) => <Link to={`/empire/replay?toolset=${encodeURIComponent(toolset)}&event=${r.eventId}`}>{r.id}</Link> },
              { key: 'eventType', label: 'Type', sortValue: (r) => r.eventType },
              { key: 'sourceTenant', label: 'Tenant', sortValue: (r) => r.sourceTenant, render: (r) => r.sourceTenant ?? <span className="muted">—</span> },
              { key: 'bodyBytes', label: 'Bytes', align: 'right', sortValue: (r) => r.bodyBytes },
              { key: 'receivedAt', label: 'Received', sortValue: (r) => r.receivedAt, render: (r) => <Time at={r.receivedAt} /> },
              {
                key: 'matches',
                label: 'Replay',
                sortValue: (r) => (r.matches ? 1 : 0),
                render: (r) => (r.matches ? <Badge tone="ok">matches</Badge> : <Badge tone="bad">{`differs: ${r.differingFields.join(', ')}`}</Badge>),
              },
              { key: 'lineage', label: 'Lineage', render: (r) => <Link to={`/empire/lineage?event=${r.eventId}`}>lineage</Link> },
            ]}
          />
        </>
      )}
    </Panel>
  );
}

function ReplayOne({ toolset, eventId }: { toolset: string; eventId: string }) {
  const state = useQuery(() => unwrap(api.GET('/api/observatory/v1/empire/{toolset}/replay', { params: { path: { toolset }, query: { eventId } } })), [toolset, eventId]);
  return (
    <Panel title="Replayed event" state={state} minHeight={240}>
      {(d) => (
        <>
          <p>
            <code>{d.id}</code> ({d.eventId && <Link to={`/empire/lineage?event=${d.eventId}`}>lineage</Link>}):{' '}
            {d.matches ? <Badge tone="ok">matches what ingest derived</Badge> : <Badge tone="bad">differs from what ingest derived</Badge>}
          </p>
          {d.envelope && (
            <dl className="facts">
              <dt>Type</dt>
              <dd>{d.envelope.eventType}</dd>
              <dt>Received</dt>
              <dd>
                <Time at={d.envelope.receivedAt} />
              </dd>
              <dt>Tenant</dt>
              <dd>{d.envelope.sourceTenant ?? '—'}</dd>
              <dt>Caused by</dt>
              <dd>{d.envelope.causedBy ?? '—'}</dd>
              <dt>Schema version</dt>
              <dd>{d.envelope.schemaVersion}</dd>
              <dt>Bytes</dt>
              <dd>{d.envelope.bodyBytes}</dd>
            </dl>
          )}
          <h3>Compared: {d.compared.join(', ')}</h3>
          <DataTable
            caption="Fields that differ"
            rows={d.fields}
            rowKey={(r) => r.field}
            empty="Nothing differs."
            columns={[
              { key: 'field', label: 'Field' },
              { key: 'stored', label: 'Stored', render: (r) => <code className="break">{r.stored ?? '—'}</code> },
              { key: 'replayed', label: 'Replayed', render: (r) => <code className="break">{r.replayed ?? '—'}</code> },
            ]}
          />
        </>
      )}
    </Panel>
  );
}
