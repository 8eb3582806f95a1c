import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { DataTable, Freshness, Panel, Time } from '../../components';
import { Kpi } from './shared/Kpi';
import { TenantTrend } from './shared/TenantTrend';
import './shared/honeypot.css';

/** Every tenant's health: events in the dashboard windows, its latest event, the cadence alarm, a 7-day trend. */
export default function Fleet() {
  const state = useQuery(() => unwrap(api.GET('/api/observatory/v1/honeypot/fleet')), [], { refreshMs: 60_000 });
  return (
    <>
      <div className="page-head">
        <h1>Fleet</h1>
      </div>
      <Panel
        state={state}
        minHeight={320}
        isEmpty={(d) => d.tenants.length === 0}
        empty={
          <>
            No tenants yet. Create one on the <Link to="/honeypot/tenants">Tenants</Link> page and point a honeypot at the ingest endpoint.
          </>
        }
      >
        {(d) => {
          const alarms = d.tenants.filter((t) => t.cadenceAlarm).length;
          return (
            <>
              <Freshness freshness={d.freshness} />
              <div className="kpis">
                <Kpi label="Tenants" value={d.tenants.length} />
                <Kpi label="Disabled" value={d.tenants.filter((t) => t.disabled).length} />
                <Kpi label="Below cadence" value={alarms} tone={alarms > 0 ? 'bad' : 'ok'} />
                <Kpi label="Events, last 24 h" value={d.tenants.reduce((n, t) => n + t.events24h, 0)} />
              </div>
              <DataTable
                caption="Tenants of the fleet"
                rows={d.tenants}
                rowKey={(t) => t.slug}
                initialSort={{ key: 'events24h', direction: 'desc' }}
                columns={[
                  {
                    key: 'slug',
                    label: 'Tenant',
                    sortValue: (t) => t.slug,
                    render: (t) => (
                      <>
                        <Link to={`/honeypot?tenant=${encodeURIComponent(t.slug)}`}>{t.name}</Link> <span className="muted">({t.slug})</span>
                      </>
                    ),
                  },
                  {
                    key: 'state',
                    label: 'State',
                    sortValue: (t) => (t.disabled ? 1 : 0),
                    render: (t) => (t.disabled ? <span className="badge">disabled</span> : <span className="badge ok">enabled</span>),
                  },
                  { key: 'events24h', label: '24 h', align: 'right', sortValue: (t) => t.events24h, render: (t) => t.events24h.toLocaleString() },
                  { key: 'events7d', label: '7 d', align: 'right', sortValue: (t) => t.events7d, render: (t) => t.events7d.toLocaleString() },
                  { key: 'events30d', label: '30 d', align: 'right', sortValue: (t) => t.events30d, render: (t) => t.events30d.toLocaleString() },
                  { key: 'trend', label: 'Events a day, 7 d', render: (t) => <TenantTrend slug={t.slug} /> },
                  { key: 'lastSeenAt', label: 'Latest event', sortValue: (t) => t.lastSeenAt, render: (t) => <Time at={t.lastSeenAt} /> },
                  {
                    key: 'cadence',
                    label: 'Cadence',
                    sortValue: (t) => (t.cadenceAlarm ? 0 : 1),
                    render: (t) => (
                      <>
                        {t.cadenceAlarm ? <span className="badge bad">alarm</span> : <span className="badge ok">ok</span>}{' '}
                        <span className="muted">{t.cadenceReason}</span>
                      </>
                    ),
                  },
                ]}
              />
            </>
          );
        }}
      </Panel>
    </>
  );
}
