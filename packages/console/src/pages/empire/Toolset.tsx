import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { BarList, Panel, Time, TimeChart, useWindowParam, WindowPicker } from '../../components';
import { formatKpi, Kpi } from './shared/Kpi';
import { TenantFilter } from './shared/TenantFilter';
import { ToolsetGate, ToolsetPicker, useToolsetChoice } from './shared/toolsets';

const WINDOWS = ['24h', '7d', '30d'] as const;

/** One toolset's events in a window: KPIs, events per hour, event types and source tenants. */
export default function ToolsetDashboard() {
  const { get } = useUrlState();
  const { toolset, known, choosing } = useToolsetChoice();
  const tenant = get('tenant');
  const windowName = useWindowParam(WINDOWS, '24h');
  const state = useQuery(
    () =>
      unwrap(
        api.GET('/api/observatory/v1/empire/{toolset}/dashboard', {
          params: { path: { toolset }, query: { window: windowName, ...(tenant ? { tenant } : {}) } },
        }),
      ),
    [toolset, tenant, windowName],
    { refreshMs: 60_000, enabled: toolset !== '' },
  );
  const q = `toolset=${encodeURIComponent(toolset)}`;
  return (
    <>
      <div className="page-head">
        <h1>Toolset {toolset || 'dashboard'}</h1>
        <div className="toolbar">
          <ToolsetPicker toolset={toolset} known={known} />
          <TenantFilter tenant={tenant} suggestions={state.data?.tenantBreakdown.flatMap((t) => (t.tenant ? [t.tenant] : [])) ?? []} />
          <WindowPicker windows={WINDOWS} fallback="24h" />
        </div>
      </div>
      <ToolsetGate toolset={toolset} choosing={choosing} none="No toolset has sent events yet: type a toolset's name above, or wait until one posts to the empire ingest.">
        <Panel state={state} minHeight={420}>
          {(d) => (
            <>
              <p>{d.blurb}</p>
              <p className="freshness muted">
                <Time at={d.windowStartIso} /> to <Time at={d.windowEndIso} />, by event time; latest event <Time at={d.lastEventAt} />.
              </p>
              <div className="kpis">
                {d.kpis.map((k) => (
                  <Kpi key={k.id} label={k.label} value={formatKpi(k)} unit={k.unit} />
                ))}
              </div>
              <section className="panel">
                <h2>Events per hour</h2>
                <TimeChart label={`${d.toolset}: events per hour`} series={[{ label: 'events', points: d.eventsPerHour.map((b) => [b.bucketIso, b.count] as const) }]} />
              </section>
              <div className="grid">
                <section className="panel">
                  <h2>Event types</h2>
                  <BarList label="Event types" items={d.eventTypeBreakdown.map((e) => ({ name: e.eventType, count: e.count }))} />
                </section>
                <section className="panel">
                  <h2>Source tenants</h2>
                  <BarList label="Source tenants" items={d.tenantBreakdown.map((t) => ({ name: t.tenant ?? '(no tenant named)', count: t.count }))} />
                </section>
              </div>
              <p className="toolbar">
                <Link to={`/empire/alerts?${q}`}>Alert rules</Link>
                <Link to={`/empire/replay?${q}`}>Replay stored events</Link>
                <Link to={`/empire/incidents?${q}`}>Incidents</Link>
                <Link to={`/provenance?${q}`}>Signing keys and attestations</Link>
              </p>
            </>
          )}
        </Panel>
      </ToolsetGate>
    </>
  );
}
