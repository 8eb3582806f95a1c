import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { BarList, DataTable, Freshness, Panel, TimeChart, useWindowParam, WindowPicker } from '../../components';
import { Kpi } from './shared/Kpi';
import { TenantPicker } from './shared/TenantPicker';

const WINDOWS = ['24h', '7d', '30d'] as const;

/** Per tenant and window: events per hour, verdict classes, top paths, agents, countries. */
export default function Dashboard() {
  const { get } = useUrlState();
  const tenant = get('tenant');
  const windowName = useWindowParam(WINDOWS, '24h');
  const state = useQuery(
    () => unwrap(api.GET('/api/observatory/v1/honeypot/dashboard', { params: { query: { window: windowName, ...(tenant ? { tenant } : {}) } } })),
    [tenant, windowName],
    { refreshMs: 60_000 },
  );
  return (
    <>
      <div className="page-head">
        <h1>Honeypot dashboard</h1>
        <div className="toolbar">
          <TenantPicker />
          <WindowPicker windows={WINDOWS} fallback="24h" />
        </div>
      </div>
      <Panel state={state} minHeight={400}>
        {(d) => (
          <>
            <Freshness freshness={d.freshness} />
            <div className="kpis">
              <Kpi label="Events" value={d.kpis.totalEvents} />
              <Kpi label="Fingerprints" value={d.kpis.uniqueFingerprints} />
              <Kpi label="Liars" value={d.kpis.liarCount} />
              <Kpi label="Liar rate" value={`${d.kpis.liarRatePct}%`} />
              <Kpi label="Verified vendors' events" value={d.kpis.knownVerifiedCount} />
              <Kpi label="Attribution coverage" value={`${d.kpis.attributionCoveragePct}%`} />
            </div>
            <section className="panel">
              <h2>Events per hour</h2>
              <TimeChart label="Events per hour" series={[{ label: 'events', points: d.eventsPerHour.map((b) => [b.bucketIso, b.count] as const) }]} />
            </section>
            <div className="grid">
              <section className="panel">
                <h2>Verdict classes</h2>
                <BarList label="Verdict classes" items={d.uaClassBreakdown.map((c) => ({ name: c.uaClass, count: c.count }))} />
              </section>
              <section className="panel">
                <h2>Top paths</h2>
                <BarList label="Top paths" items={d.topPaths.map((p) => ({ name: p.path, count: p.count }))} />
              </section>
              <section className="panel">
                <h2>Countries</h2>
                <BarList label="Countries" items={d.topCountries.map((c) => ({ name: c.countryCode, count: c.count }))} />
              </section>
            </div>
            <section className="panel">
              <h2>Agents</h2>
              <DataTable
                caption="Top user agents"
                rows={d.topUas}
                rowKey={(r) => r.uaRaw}
                columns={[
                  { key: 'uaRaw', label: 'User agent', sortValue: (r) => r.uaRaw, render: (r) => <code>{r.uaRaw}</code> },
                  { key: 'count', label: 'Events', align: 'right', sortValue: (r) => r.count },
                ]}
                initialSort={{ key: 'count', direction: 'desc' }}
                empty="No agents in this window."
              />
            </section>
          </>
        )}
      </Panel>
    </>
  );
}
