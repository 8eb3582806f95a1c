import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { DataTable, Panel, Time } from '../../components';
import { Kpi } from './shared/Kpi';
import { FingerprintLink } from './shared/links';
import { TenantPicker } from './shared/TenantPicker';
import './shared/honeypot.css';

/** Tarpitted fingerprints: those in force first, then the latest that ended. */
export default function Tarpits() {
  const tenant = useUrlState().get('tenant');
  const state = useQuery(
    () => unwrap(api.GET('/api/observatory/v1/honeypot/tarpits', { params: { query: tenant ? { tenant } : {} } })),
    [tenant],
    { refreshMs: 30_000 },
  );
  return (
    <>
      <div className="page-head">
        <h1>Tarpits</h1>
        <div className="toolbar">
          <TenantPicker />
        </div>
      </div>
      <Panel
        state={state}
        minHeight={300}
        isEmpty={(d) => d.rows.length === 0}
        empty="No fingerprint has been tarpitted: one is when it sends the liar threshold of LIAR events within 10 minutes."
      >
        {(d) => {
          const active = d.rows.filter((r) => r.active).length;
          return (
            <>
              <div className="kpis">
                <Kpi label="In force" value={active} tone={active > 0 ? 'warn' : 'ok'} />
                <Kpi label="Ended (latest 100)" value={d.rows.length - active} />
              </div>
              <DataTable
                caption={`Tarpits${d.tenant ? ` of ${d.tenant}` : ''}`}
                rows={d.rows}
                rowKey={(r) => `${r.tenant}|${r.fingerprintId}|${r.triggeredAt}`}
                columns={[
                  {
                    key: 'active',
                    label: 'State',
                    sortValue: (r) => (r.active ? 0 : 1),
                    render: (r) => (r.active ? <span className="badge bad">in force</span> : <span className="badge">ended</span>),
                  },
                  { key: 'fingerprintId', label: 'Fingerprint', sortValue: (r) => r.fingerprintId, render: (r) => <FingerprintLink id={r.fingerprintId} tenant={r.tenant} /> },
                  { key: 'tenant', label: 'Tenant', sortValue: (r) => r.tenant },
                  { key: 'triggeredAt', label: 'Triggered', sortValue: (r) => r.triggeredAt, render: (r) => <Time at={r.triggeredAt} /> },
                  { key: 'expiresAt', label: 'Expires', sortValue: (r) => r.expiresAt, render: (r) => <Time at={r.expiresAt} /> },
                  { key: 'delayMs', label: 'Delay', align: 'right', sortValue: (r) => r.delayMs, render: (r) => `${(r.delayMs / 1000).toLocaleString()} s` },
                  { key: 'liarEventCount', label: 'LIAR events', align: 'right', sortValue: (r) => r.liarEventCount },
                  { key: 'reason', label: 'Reason', sortValue: (r) => r.reason, render: (r) => <code>{r.reason}</code> },
                ]}
              />
            </>
          );
        }}
      </Panel>
    </>
  );
}
