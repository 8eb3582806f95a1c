import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { DataTable, Panel } from '../../components';
import { Kpi } from './shared/Kpi';
import { TenantPicker } from './shared/TenantPicker';
import './shared/honeypot.css';

/** Hits on the generated bait URLs under each sitemap root. */
export default function Sitemap() {
  const tenant = useUrlState().get('tenant');
  const state = useQuery(
    () => unwrap(api.GET('/api/observatory/v1/honeypot/sitemap', { params: { query: tenant ? { tenant } : {} } })),
    [tenant],
    { refreshMs: 60_000 },
  );
  return (
    <>
      <div className="page-head">
        <h1>Bait sitemap</h1>
        <div className="toolbar">
          <TenantPicker />
        </div>
      </div>
      <Panel state={state} minHeight={280}>
        {(d) => (
          <>
            <div className="kpis">
              <Kpi label="Generated URLs seen, 7 d" value={d.uniqueGeneratedUrlsSeen7d} />
              <Kpi label="Hits on them, 7 d" value={d.totalGeneratedHits7d} />
            </div>
            <DataTable
              caption={`Bait roots${d.tenant ? ` of ${d.tenant}` : ''}`}
              rows={d.buckets}
              rowKey={(b) => b.rootPath}
              empty="No bait roots."
              columns={[
                { key: 'rootPath', label: 'Root', sortValue: (b) => b.rootPath, render: (b) => <code>{b.rootPath}</code> },
                { key: 'hits24h', label: 'Hits, 24 h', align: 'right', sortValue: (b) => b.hits24h },
                { key: 'hits7d', label: 'Hits, 7 d', align: 'right', sortValue: (b) => b.hits7d },
                { key: 'uniqueIpHashes24h', label: 'Clients, 24 h', align: 'right', sortValue: (b) => b.uniqueIpHashes24h },
                {
                  key: 'topPath',
                  label: 'Most hit, 7 d',
                  sortValue: (b) => b.topPathCount,
                  render: (b) =>
                    b.topPath ? (
                      <>
                        <code>{b.topPath}</code> <span className="muted">({b.topPathCount.toLocaleString()})</span>
                      </>
                    ) : (
                      <span className="muted">no hits</span>
                    ),
                },
              ]}
            />
          </>
        )}
      </Panel>
    </>
  );
}
