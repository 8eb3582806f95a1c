import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { BarList, DataTable, Panel, Time } from '../../components';
import { Kpi } from './shared/Kpi';
import { TenantPicker } from './shared/TenantPicker';
import { UaClassBadge } from './shared/uaClasses';
import './shared/honeypot.css';

/** Hits per bait family of the lure catalogue over 24 hours and 7 days. */
export default function Lures() {
  const tenant = useUrlState().get('tenant');
  const state = useQuery(
    () => unwrap(api.GET('/api/observatory/v1/honeypot/lures', { params: { query: tenant ? { tenant } : {} } })),
    [tenant],
    { refreshMs: 60_000 },
  );
  return (
    <>
      <div className="page-head">
        <h1>Lures</h1>
        <div className="toolbar">
          <TenantPicker />
        </div>
      </div>
      <Panel state={state} minHeight={360} isEmpty={(d) => d.families.length === 0} empty="The lure catalogue is empty.">
        {(d) => (
          <>
            <div className="kpis">
              <Kpi label="Families" value={d.totals.families} />
              <Kpi label="Hits, 24 h" value={d.totals.hits24h} />
              <Kpi label="Hits, 7 d" value={d.totals.hits7d} />
            </div>
            <section className="panel">
              <h2>Hits in 7 days</h2>
              <BarList label="Lure hits in 7 days" items={d.families.filter((f) => f.hits7d > 0).map((f) => ({ name: f.title, count: f.hits7d }))} />
            </section>
            <DataTable
              caption={`Lure families${d.tenant ? ` of ${d.tenant}` : ''}`}
              rows={d.families}
              rowKey={(f) => f.id}
              initialSort={{ key: 'hits7d', direction: 'desc' }}
              columns={[
                {
                  key: 'title',
                  label: 'Family',
                  sortValue: (f) => f.title,
                  render: (f) => (
                    <details className="hp-intent">
                      <summary>
                        <strong>{f.title}</strong>
                      </summary>
                      <span className="muted">{f.intent}</span>
                    </details>
                  ),
                },
                { key: 'kind', label: 'Kind', sortValue: (f) => f.kind },
                { key: 'pathLike', label: 'Paths like', sortValue: (f) => f.pathLike, render: (f) => <code>{f.pathLike}</code> },
                { key: 'hits24h', label: '24 h', align: 'right', sortValue: (f) => f.hits24h },
                { key: 'hits7d', label: '7 d', align: 'right', sortValue: (f) => f.hits7d },
                { key: 'uniqueIpHashes24h', label: 'Clients, 24 h', align: 'right', sortValue: (f) => f.uniqueIpHashes24h },
                { key: 'uniqueFingerprints24h', label: 'Fingerprints, 24 h', align: 'right', sortValue: (f) => f.uniqueFingerprints24h },
                { key: 'topUaClass', label: 'Top verdict', sortValue: (f) => f.topUaClass, render: (f) => (f.topUaClass ? <UaClassBadge value={f.topUaClass} /> : '—') },
                { key: 'lastHitAt', label: 'Last hit', sortValue: (f) => f.lastHitAt, render: (f) => <Time at={f.lastHitAt} /> },
              ]}
            />
          </>
        )}
      </Panel>
    </>
  );
}
