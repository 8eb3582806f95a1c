import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { DataTable, Panel, Sparkline, Time } from '../../components';

/** Every toolset that has sent events: the last day hour by hour, 24 h and 7 d counts, the latest event. */
export default function Overview() {
  const state = useQuery(() => unwrap(api.GET('/api/observatory/v1/empire/overview')), [], { refreshMs: 60_000 });
  return (
    <>
      <div className="page-head">
        <h1>Empire overview</h1>
        <div className="toolbar">
          <Link to="/empire/incidents?status=open">Open incidents</Link>
          <Link to="/empire/slo">Ingest SLO</Link>
        </div>
      </div>
      <Panel
        title="Toolsets"
        state={state}
        minHeight={260}
        isEmpty={(d) => d.toolsets.length === 0}
        empty="No toolset has sent an event yet. A toolset appears here once it posts events to /api/observatory/empire/ingest (see docs/empire/README.md)."
      >
        {(d) => (
          <>
            <p className="freshness muted">
              Whole UTC hours by event time, up to <Time at={d.windowEndIso} />.
            </p>
            <DataTable
              caption="Toolsets and their last 24 hours"
              rows={d.toolsets}
              rowKey={(r) => r.toolset}
              initialSort={{ key: 'events24h', direction: 'desc' }}
              columns={[
                {
                  key: 'toolset',
                  label: 'Toolset',
                  sortValue: (r) => r.toolset,
                  render: (r) => <Link to={`/empire/toolset?toolset=${encodeURIComponent(r.toolset)}`}>{r.toolset}</Link>,
                },
                { key: 'trend', label: 'Last 24 hours', render: (r) => <Sparkline values={r.sparkline24h} label={`${r.toolset}, events per hour over the last 24 hours`} /> },
                { key: 'events24h', label: 'Events 24 h', align: 'right', sortValue: (r) => r.events24h, render: (r) => r.events24h.toLocaleString() },
                { key: 'events7d', label: 'Events 7 d', align: 'right', sortValue: (r) => r.events7d, render: (r) => r.events7d.toLocaleString() },
                { key: 'lastEventAt', label: 'Latest event', sortValue: (r) => r.lastEventAt, render: (r) => <Time at={r.lastEventAt} /> },
                { key: 'blurb', label: 'Summary', render: (r) => <span className="muted">{r.blurb}</span> },
              ]}
            />
          </>
        )}
      </Panel>
    </>
  );
}
