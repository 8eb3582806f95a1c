import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { DataTable, Panel, Time, useWindowParam, WindowPicker } from '../../components';
import { SloBadge } from './shared/badges';
import './shared/empire.css';

const WINDOWS = ['1h', '24h', '7d'] as const;

const ms = (v: number | null) => (v === null ? '—' : `${v.toLocaleString(undefined, { maximumFractionDigits: 1 })} ms`);
const pct = (v: number | null) => (v === null ? '—' : `${v.toLocaleString(undefined, { maximumFractionDigits: 2 })}%`);

/** Per toolset, how its ingest requests went: a badge (ok, warn, bad), the ok rate and latency. */
export default function Slo() {
  const windowName = useWindowParam(WINDOWS, '24h');
  const state = useQuery(() => unwrap(api.GET('/api/observatory/v1/empire/slo', { params: { query: { window: windowName } } })), [windowName], { refreshMs: 60_000 });
  return (
    <>
      <div className="page-head">
        <h1>Ingest SLO</h1>
        <WindowPicker windows={WINDOWS} fallback="24h" />
      </div>
      <Panel
        state={state}
        minHeight={300}
        isEmpty={(d) => d.rows.length === 0}
        empty="No toolset has sent an ingest request in the last 7 days, so there is nothing to judge yet."
      >
        {(d) => (
          <>
            <p className="freshness muted">
              Requests received since <Time at={d.windowStartIso} />. ok: at least {d.thresholds.green.okRatePct}% ok and p95 within {d.thresholds.green.p95Ms} ms; warn: {d.thresholds.yellow.okRatePct}% and{' '}
              {d.thresholds.yellow.p95Ms} ms; bad: worse; fewer than {d.thresholds.minSamples} requests are not judged.
            </p>
            <ul className="slo-cards" aria-label="SLO badges">
              {d.rows.map((r) => (
                <li key={r.toolset} className="slo-card">
                  <h2>
                    <Link to={`/empire/toolset?toolset=${encodeURIComponent(r.toolset)}`}>{r.toolset}</Link>
                    <SloBadge badge={r.badge} />
                  </h2>
                  <p>
                    {pct(r.okRatePct)} ok of {r.totalSamples.toLocaleString()} requests; p95 {ms(r.p95Ms)}
                  </p>
                </li>
              ))}
            </ul>
            <section className="panel">
              <h2>Details</h2>
              <DataTable
                caption="Ingest SLO per toolset"
                rows={d.rows}
                rowKey={(r) => r.toolset}
                columns={[
                  { key: 'toolset', label: 'Toolset', sortValue: (r) => r.toolset },
                  { key: 'badge', label: 'Badge', sortValue: (r) => r.badge, render: (r) => <SloBadge badge={r.badge} /> },
                  { key: 'totalSamples', label: 'Requests', align: 'right', sortValue: (r) => r.totalSamples, render: (r) => r.totalSamples.toLocaleString() },
                  { key: 'okRatePct', label: 'ok rate', align: 'right', sortValue: (r) => r.okRatePct, render: (r) => pct(r.okRatePct) },
                  { key: 'p50Ms', label: 'p50', align: 'right', sortValue: (r) => r.p50Ms, render: (r) => ms(r.p50Ms) },
                  { key: 'p95Ms', label: 'p95', align: 'right', sortValue: (r) => r.p95Ms, render: (r) => ms(r.p95Ms) },
                  { key: 'p99Ms', label: 'p99', align: 'right', sortValue: (r) => r.p99Ms, render: (r) => ms(r.p99Ms) },
                  {
                    key: 'outcomes',
                    label: 'Outcomes',
                    render: (r) => (r.outcomeBreakdown.length === 0 ? <span className="muted">none in this window</span> : r.outcomeBreakdown.map((o) => `${o.outcome} ${o.count}`).join(', ')),
                  },
                ]}
              />
            </section>
          </>
        )}
      </Panel>
    </>
  );
}
