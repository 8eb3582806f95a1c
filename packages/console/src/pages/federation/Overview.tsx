import { Link } from 'react-router';
import { useQuery } from '../../app/useQuery';
import { DataTable, Panel, Sparkline, Time } from '../../components';
import { loadFederatedOverview } from './shared/api';
import { FailedRegions, RegionKeys } from './shared/badges';
import './shared/federation.css';

/** Every toolset in every active region, merged by toolset: sums, the latest event, and each region's share. */
export default function FederatedOverview() {
  const state = useQuery(loadFederatedOverview, [], { refreshMs: 60_000 });
  return (
    <>
      <div className="page-head">
        <h1>Federated overview</h1>
        <div className="toolbar">
          <Link to="/federation/regions">Regions</Link>
          <Link to="/empire">This deployment's overview</Link>
        </div>
      </div>
      <Panel title="Regions asked" state={state} minHeight={90}>
        {(d) => (
          <dl className="facts">
            <dt>Participating</dt>
            <dd data-testid="participating">
              <RegionKeys keys={d.participatingRegions} label="Participating regions" />
            </dd>
            <dt>Failed</dt>
            <dd data-testid="failed">
              <FailedRegions failed={d.failedRegions} label="Failed regions" />
            </dd>
          </dl>
        )}
      </Panel>
      <Panel
        title="Toolsets in every region"
        state={state}
        minHeight={240}
        isEmpty={(d) => d.toolsets.length === 0}
        empty="No toolset has sent an event in any participating region. A toolset appears here once it posts events to a region's /api/observatory/empire/ingest."
      >
        {(d) => (
          <>
            <p className="freshness muted">
              Whole UTC hours by event time, up to <Time at={d.windowEndIso} />, summed over {d.participatingRegions.length} region
              {d.participatingRegions.length === 1 ? '' : 's'}.
            </p>
            <DataTable
              caption="Toolsets merged over the regions"
              rows={d.toolsets}
              rowKey={(r) => r.toolset}
              initialSort={{ key: 'events24h', direction: 'desc' }}
              columns={[
                { key: 'toolset', label: 'Toolset', sortValue: (r) => r.toolset },
                { key: 'trend', label: 'Last 24 hours', render: (r) => <Sparkline values={r.sparkline24h} label={`${r.toolset}, events per hour over the last 24 hours in every region`} /> },
                { key: 'events24h', label: 'Events 24 h', align: 'right', sortValue: (r) => r.events24h, render: (r) => r.events24h.toLocaleString() },
                { key: 'events7d', label: 'Events 7 d', align: 'right', sortValue: (r) => r.events7d, render: (r) => r.events7d.toLocaleString() },
                {
                  key: 'perRegion',
                  label: 'Per region (24 h)',
                  render: (r) => {
                    const entries = Object.entries(r.perRegion).sort(([a], [b]) => a.localeCompare(b));
                    if (entries.length === 0) return <span className="muted">none in 24 h</span>;
                    return (
                      <ul className="per-region" aria-label={`${r.toolset} per region`}>
                        {entries.map(([region, count]) => (
                          <li key={region}>
                            <code>{region}</code> {count.toLocaleString()}
                          </li>
                        ))}
                      </ul>
                    );
                  },
                },
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
