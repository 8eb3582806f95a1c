import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { DataTable, Freshness, Panel, Time, useWindowParam, WindowPicker } from '../../components';
import { investigateHref } from './shared/links';
import { TenantPicker } from './shared/TenantPicker';
import { UaClassBadge } from './shared/uaClasses';
import './shared/honeypot.css';

const WINDOWS = ['24h', '7d', '30d'] as const;

/** Fingerprints grouped by (JA4, class, AS), most events first; each opens its busiest fingerprint in investigate. */
export default function Clusters() {
  const tenant = useUrlState().get('tenant');
  const window = useWindowParam(WINDOWS, '24h');
  const state = useQuery(
    () => unwrap(api.GET('/api/observatory/v1/honeypot/clusters', { params: { query: { window, ...(tenant ? { tenant } : {}) } } })),
    [tenant, window],
    { refreshMs: 60_000 },
  );
  return (
    <>
      <div className="page-head">
        <h1>Clusters</h1>
        <div className="toolbar">
          <TenantPicker />
          <WindowPicker windows={WINDOWS} fallback="24h" />
        </div>
      </div>
      <Panel state={state} minHeight={360} isEmpty={(d) => d.clusters.length === 0} empty="No events in this window, so no clusters: pick a longer window or another tenant.">
        {(d) => (
          <>
            <Freshness freshness={d.freshness} />
            <DataTable
              caption={`Clusters over ${d.window}${d.tenant ? ` of ${d.tenant}` : ''}`}
              rows={d.clusters}
              rowKey={(c) => `${c.ja4 ?? ''}|${c.uaClass}|${c.asn ?? ''}`}
              initialSort={{ key: 'eventCount', direction: 'desc' }}
              columns={[
                { key: 'uaClass', label: 'Verdict', sortValue: (c) => c.uaClass, render: (c) => <UaClassBadge value={c.uaClass} /> },
                {
                  key: 'investigate',
                  label: 'Busiest fingerprint',
                  render: (c) => (
                    <Link to={investigateHref(c.sampleFingerprintId, d.tenant)} aria-label={`Investigate ${c.sampleFingerprintId}, the busiest fingerprint of this cluster`}>
                      <code>{c.sampleFingerprintId}</code>
                    </Link>
                  ),
                },
                { key: 'ja4', label: 'JA4', sortValue: (c) => c.ja4, render: (c) => (c.ja4 ? <code>{c.ja4}</code> : <span className="muted">unknown</span>) },
                { key: 'asn', label: 'AS', align: 'right', sortValue: (c) => c.asn, render: (c) => (c.asn === null ? 'unknown' : `AS${c.asn}`) },
                { key: 'eventCount', label: 'Events', align: 'right', sortValue: (c) => c.eventCount, render: (c) => c.eventCount.toLocaleString() },
                { key: 'fingerprintCount', label: 'Fingerprints', align: 'right', sortValue: (c) => c.fingerprintCount },
                { key: 'firstSeen', label: 'First seen', sortValue: (c) => c.firstSeen, render: (c) => <Time at={c.firstSeen} /> },
                { key: 'lastSeen', label: 'Last seen', sortValue: (c) => c.lastSeen, render: (c) => <Time at={c.lastSeen} /> },
                {
                  key: 'sampleUa',
                  label: 'Sample user agent',
                  sortValue: (c) => c.sampleUa,
                  render: (c) => (
                    <code className="hp-ua" title={c.sampleUa}>
                      {c.sampleUa || '(empty)'}
                    </code>
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
