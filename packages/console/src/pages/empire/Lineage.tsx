import { useMemo } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { DataTable, Field, GraphView, Panel, Time } from '../../components';
import { useSyncedText } from './shared/useSyncedText';
import { lineageGraph, lineageRows, type LineageRow } from './shared/lineage';

const loadLineage = (eventId: string, depth: number | undefined) =>
  unwrap(api.GET('/api/observatory/v1/empire/lineage/{eventId}', { params: { path: { eventId }, query: depth !== undefined ? { depth } : {} } }));
type LineageAnswer = Awaited<ReturnType<typeof loadLineage>>;

/** What led to an event and what it led to (`causedBy` both ways), drawn and listed. */
export default function Lineage() {
  const { get, set } = useUrlState();
  const eventId = get('event');
  const depthText = get('depth');
  const depth = /^\d+$/.test(depthText) ? Number(depthText) : undefined;
  const [text, setText] = useSyncedText(eventId);
  const [depthInput, setDepthInput] = useSyncedText(depthText);
  const state = useQuery(
    () => loadLineage(eventId, depth),
    [eventId, depth],
    { enabled: eventId !== '' },
  );
  return (
    <>
      <div className="page-head">
        <h1>Event lineage</h1>
      </div>
      <section className="panel">
        <form
          className="toolbar"
          aria-label="Lineage of an event"
          onSubmit={(e) => {
            e.preventDefault();
            set({ event: text.trim() || null, depth: depthInput.trim() || null });
          }}
        >
          <Field label="Event id" hint="The eventId the ingest answered (a UUID); incidents and the replay list link here.">
            <input value={text} onChange={(e) => setText(e.target.value)} size={38} spellCheck={false} />
          </Field>
          <Field label="Steps each way" hint="1 to 5,000; default 1,000.">
            <input type="number" min={1} max={5000} value={depthInput} onChange={(e) => setDepthInput(e.target.value)} style={{ width: '6rem' }} />
          </Field>
          <button type="submit" className="primary">
            Show lineage
          </button>
        </form>
      </section>
      {eventId === '' ? (
        <section className="panel">
          <p className="empty">Enter an event id to see the events that caused it and the events it caused.</p>
        </section>
      ) : (
        <Panel state={state} minHeight={520}>
          {(d) => <LineageView data={d} />}
        </Panel>
      )}
    </>
  );
}

function LineageView({ data }: { data: LineageAnswer }) {
  const rows = useMemo(() => lineageRows(data), [data]);
  const graph = useMemo(() => lineageGraph(rows), [rows]);
  const { focal } = data;
  return (
    <>
      <p>
        <strong>{focal.eventType}</strong> <code>{focal.id}</code> of <Link to={`/empire/toolset?toolset=${encodeURIComponent(focal.toolset)}`}>{focal.toolset}</Link>, at{' '}
        <Time at={focal.ts} />: {data.upstream.length} upstream and {data.downstream.length} downstream within {data.depth.toLocaleString()} steps.
      </p>
      {(data.upstreamTruncated || data.downstreamTruncated) && (
        <p className="error-note">
          The walk was cut short ({[data.upstreamTruncated && 'upstream', data.downstreamTruncated && 'downstream'].filter(Boolean).join(' and ')}): there are more events than
          shown. Open an event at the edge to walk on from it.
        </p>
      )}
      <section className="panel">
        <h2>Graph</h2>
        <p className="muted">Arrows point from a cause to what it caused; the focal event is dark grey, the others blue.</p>
        <GraphView nodes={graph.nodes} edges={graph.edges} label={`Lineage of ${focal.id}`} height={380} />
      </section>
      <section className="panel">
        <h2>Events</h2>
        <DataTable<LineageRow>
          caption="Events in the lineage"
          rows={rows}
          rowKey={(r) => r.eventId}
          columns={[
            { key: 'side', label: 'Side', sortValue: (r) => r.order, render: (r) => r.side },
            { key: 'depth', label: 'Steps', align: 'right', sortValue: (r) => r.depth },
            { key: 'eventType', label: 'Type', sortValue: (r) => r.eventType },
            {
              key: 'id',
              label: 'Event',
              sortValue: (r) => r.id,
              render: (r) => (r.side === 'focal' ? <code>{r.id}</code> : <Link to={`/empire/lineage?event=${encodeURIComponent(r.eventId)}`}>{r.id}</Link>),
            },
            { key: 'causedBy', label: 'Caused by', render: (r) => (r.causedBy ? <code>{r.causedBy}</code> : <span className="muted">—</span>) },
            { key: 'toolset', label: 'Toolset', sortValue: (r) => r.toolset },
            { key: 'tenant', label: 'Tenant', sortValue: (r) => r.tenant, render: (r) => r.tenant ?? <span className="muted">—</span> },
            { key: 'signed', label: 'Signature', render: (r) => (r.compatMode ? 'unsigned (compat)' : 'verified') },
            { key: 'ts', label: 'Time', sortValue: (r) => r.ts, render: (r) => <Time at={r.ts} /> },
          ]}
        />
      </section>
    </>
  );
}
