import { api, unwrap } from '../../../api/client';
import { useQuery } from '../../../app/useQuery';
import { DataTable, Panel, Time } from '../../../components';

/** Enabled tenants that went quiet against their 14-day baseline. */
export function Heartbeat() {
  const state = useQuery(() => unwrap(api.GET('/api/observatory/v1/honeypot/ops/heartbeat')), [], { refreshMs: 60_000 });
  return (
    <Panel
      title="Silent tenants"
      state={state}
      minHeight={140}
      isEmpty={(d) => d.silentTenants.length === 0}
      empty="None: every enabled tenant with a baseline has sent events recently."
    >
      {(d) => (
        <DataTable
          caption="Tenants with no recent event"
          rows={d.silentTenants}
          rowKey={(t) => t.slug}
          columns={[
            { key: 'slug', label: 'Tenant', sortValue: (t) => t.slug, render: (t) => `${t.name} (${t.slug})` },
            { key: 'lastSeenAt', label: 'Latest event', sortValue: (t) => t.lastSeenAt, render: (t) => <Time at={t.lastSeenAt} /> },
            { key: 'lastHourCount', label: 'Last hour', align: 'right', sortValue: (t) => t.lastHourCount },
            { key: 'baselineHourlyAvg', label: 'Usual per hour', align: 'right', sortValue: (t) => t.baselineHourlyAvg, render: (t) => t.baselineHourlyAvg.toLocaleString() },
            { key: 'baselineEvents14d', label: 'Baseline events', align: 'right', sortValue: (t) => t.baselineEvents14d },
          ]}
        />
      )}
    </Panel>
  );
}

/** Row counts and timings of the honeypot store. */
export function DbHealth({ refreshKey = 0 }: { refreshKey?: number }) {
  const state = useQuery(() => unwrap(api.GET('/api/observatory/v1/honeypot/ops/db-health')), [refreshKey], { refreshMs: 60_000 });
  return (
    <Panel title="Database" state={state} minHeight={200}>
      {(d) => {
        const est = (field: string) => (d.estimatedFields.includes(field) ? ' (estimate)' : '');
        return (
          <dl className="facts" aria-label="Database health">
            <dt>Events stored</dt>
            <dd>{d.honeypotEventCount.toLocaleString()}</dd>
            <dt>Events, last 24 h</dt>
            <dd>{d.honeypotEvent24hCount.toLocaleString()}</dd>
            <dt>Fingerprints</dt>
            <dd>
              {d.fingerprintCount.toLocaleString()}
              {est('fingerprintCount')}
            </dd>
            <dt>Ingest samples</dt>
            <dd>
              {d.ingestSampleCount.toLocaleString()}
              {est('ingestSampleCount')}
            </dd>
            <dt>Samples span</dt>
            <dd>
              <Time at={d.oldestSampleIso} /> to <Time at={d.newestSampleIso} />
            </dd>
            <dt>Dashboard read</dt>
            <dd>{d.dashboardQueryMs.toLocaleString(undefined, { maximumFractionDigits: 2 })} ms</dd>
            <dt>Rollups advanced</dt>
            <dd>
              <Time at={d.rollupsAdvancedAt} />
            </dd>
          </dl>
        );
      }}
    </Panel>
  );
}
