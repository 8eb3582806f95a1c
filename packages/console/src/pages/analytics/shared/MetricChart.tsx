import { useMemo } from 'react';
import { useQuery } from '../../../app/useQuery';
import { useUrlState } from '../../../app/urlState';
import { DataTable, Field, Freshness, Panel, TimeChart } from '../../../components';
import { type Dimension, formatValue, loadMetricSeries, type Metric } from './api';
import { dayBounds } from './days';
import { groupLabel, toSeries } from './series';

/** One metric per UTC day over the range, grouped by the dimensions picked (`?metric=…&dims=…`). */
export function MetricChart({ metrics, days }: { metrics: readonly Metric[]; days: number }) {
  const { get, set } = useUrlState();
  const metric = metrics.find((m) => m.key === get('metric')) ?? metrics[0];
  const dims = get('dims')
    .split(',')
    .filter((d): d is Dimension => (metric?.dimensions as readonly string[] | undefined)?.includes(d) ?? false);
  const { from, to } = dayBounds(days);
  const state = useQuery(
    () => (metric ? loadMetricSeries({ metric: metric.key, from, to, ...(dims.length ? { dims: dims.join(',') } : {}) }) : Promise.resolve(null)),
    [metric?.key, from, to, dims.join(',')],
  );
  const series = useMemo(() => (state.data ? toSeries(state.data) : []), [state.data]);

  const toggle = (d: Dimension, on: boolean) => {
    const next = on ? [...dims, d] : dims.filter((x) => x !== d);
    set({ dims: next.join(',') || null, metric: metric?.key ?? null });
  };

  return (
    <Panel
      title={metric ? `${metric.title} per day` : 'Metric chart'}
      state={state}
      minHeight={380}
      isEmpty={(d) => d === null}
      empty="Pick a metric from the list to chart it."
      actions={
        metric && (
          <div className="toolbar">
            <Field label="Metric">
              <select value={metric.key} onChange={(e) => set({ metric: e.target.value, dims: null })}>
                {metrics.map((m) => (
                  <option key={m.key} value={m.key}>
                    {m.title}
                  </option>
                ))}
              </select>
            </Field>
            {metric.dimensions.length > 0 && (
              <fieldset className="toolbar" style={{ border: 0, padding: 0, margin: 0 }}>
                <legend className="field-label">Group by</legend>
                {metric.dimensions.map((d) => (
                  <label key={d}>
                    <input type="checkbox" checked={dims.includes(d)} onChange={(e) => toggle(d, e.target.checked)} /> {d}
                  </label>
                ))}
              </fieldset>
            )}
          </div>
        )
      }
    >
      {(answer) =>
        answer && (
          <>
            <Freshness freshness={answer.freshness} />
            <div className="kpis">
              <div className="kpi">
                <div className="value">{formatValue(answer.total.value, answer.unit)}</div>
                <div className="label">Total, {answer.from} to {answer.to} (exclusive)</div>
              </div>
              <div className="kpi">
                <div className="value">{answer.total.count.toLocaleString()}</div>
                <div className="label">Facts summed</div>
              </div>
            </div>
            {answer.invalidDims.length > 0 && <p className="muted">Not grouped by {answer.invalidDims.join(', ')}: this metric does not carry it.</p>}
            <TimeChart label={`${metric?.title ?? answer.metric} per day`} series={series} />
            <details>
              <summary>The numbers ({answer.series.length} rows)</summary>
              <DataTable
                caption={`${answer.metric} per day`}
                rows={answer.series}
                rowKey={(p, i) => `${p.dimDate}|${groupLabel(p, answer.dims)}|${i}`}
                initialSort={{ key: 'day', direction: 'desc' }}
                empty="No facts in this range."
                columns={[
                  { key: 'day', label: 'Day (UTC)', sortValue: (p) => p.dimDate, render: (p) => p.dimDate },
                  ...(answer.dims.length > 0 ? [{ key: 'group', label: answer.dims.join(' · '), sortValue: (p: (typeof answer.series)[number]) => groupLabel(p, answer.dims), render: (p: (typeof answer.series)[number]) => groupLabel(p, answer.dims) }] : []),
                  { key: 'value', label: 'Value', align: 'right', sortValue: (p) => p.value, render: (p) => formatValue(p.value, answer.unit) },
                  { key: 'count', label: 'Facts', align: 'right', sortValue: (p) => p.count },
                ]}
              />
            </details>
          </>
        )
      }
    </Panel>
  );
}
