import { api, unwrap } from '../../../api/client';
import { useQuery } from '../../../app/useQuery';
import { BarList, Panel, Time, useWindowParam, WindowPicker } from '../../../components';
import { Kpi } from './Kpi';

const WINDOWS = ['1h', '24h', '7d'] as const;
const ms = (v: number | null) => (v === null ? null : `${v.toLocaleString(undefined, { maximumFractionDigits: 1 })} ms`);
const pct = (v: number | null) => (v === null ? null : `${v}%`);

/** Ingest outcomes and latency over a window, from the ingest samples. */
export function IngestSlo({ refreshKey = 0 }: { refreshKey?: number }) {
  const window = useWindowParam(WINDOWS, '24h');
  const state = useQuery(() => unwrap(api.GET('/api/observatory/v1/honeypot/ops/ingest', { params: { query: { window } } })), [window, refreshKey], {
    refreshMs: 30_000,
  });
  return (
    <Panel
      title="Ingest SLO"
      state={state}
      minHeight={260}
      actions={<WindowPicker windows={WINDOWS} fallback="24h" />}
      isEmpty={(d) => d.totalSamples === 0}
      empty="No ingest request in this window: pick a longer one, or send a test event below."
    >
      {(d) => (
        <>
          <p className="muted">
            Since <Time at={d.windowStartIso} />.
          </p>
          <div className="kpis">
            <Kpi label="Requests" value={d.totalSamples} />
            <Kpi label="Accepted" value={pct(d.okRatePct)} tone={d.okRatePct !== null && d.okRatePct < 99 ? 'bad' : 'ok'} />
            <Kpi label="Signature failures" value={d.signatureFailureCount} tone={d.signatureFailureCount > 0 ? 'warn' : undefined} />
            <Kpi label="p50" value={ms(d.p50Ms)} />
            <Kpi label="p95" value={ms(d.p95Ms)} />
            <Kpi label="p99" value={ms(d.p99Ms)} />
          </div>
          <div className="grid">
            <section>
              <h3>Outcomes</h3>
              <BarList label="Ingest outcomes" items={d.outcomeBreakdown.map((o) => ({ name: o.outcome, count: o.count }))} />
            </section>
            <section>
              <h3>Per tenant header</h3>
              <BarList label="Ingest requests per tenant" items={d.perTenantCount.map((t) => ({ name: t.tenant ?? '(no tenant header)', count: t.count }))} />
            </section>
          </div>
        </>
      )}
    </Panel>
  );
}
