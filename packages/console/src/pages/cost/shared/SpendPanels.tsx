import { useMemo } from 'react';
import { useQuery } from '../../../app/useQuery';
import { useUrlState } from '../../../app/urlState';
import { BarList, Busy, DataTable, ErrorNote, Field, Panel, Segmented, TimeChart, useChoiceParam } from '../../../components';
import { dayStart } from '../../analytics/shared/days';
import { loadByToolset, loadRollup, ROLLUP_GROUPS, type RollupGroup, usd } from './api';

/** The spend of the range summed per toolset, vendor or sku (`?group=`). */
export function RollupPanel({ from, to }: { from: string; to: string }) {
  const group: RollupGroup = useChoiceParam('group', ROLLUP_GROUPS, 'toolset');
  const state = useQuery(() => loadRollup({ from, to, group }), [from, to, group]);
  return (
    <Panel
      title={`Spend by ${group}`}
      state={state}
      minHeight={260}
      isEmpty={(d) => d.rows.length === 0}
      empty="No cost records in this range. Records arrive through POST {v1}/cost/records (docs/cost/README.md)."
      actions={
        <Segmented label="Group spend by" param="group" options={ROLLUP_GROUPS} fallback="toolset" />
      }
    >
      {(d) => (
        <>
          <div className="kpis">
            <div className="kpi">
              <div className="value">{usd(d.total.amountUsd)}</div>
              <div className="label">
                Spend, {d.from} to {d.to} (exclusive)
              </div>
            </div>
            <div className="kpi">
              <div className="value">{d.total.rows.toLocaleString()}</div>
              <div className="label">Cost records</div>
            </div>
          </div>
          <BarList label={`Spend by ${group} (USD)`} items={d.rows.slice(0, 10).map((r) => ({ name: r.key, count: r.amountUsd }))} />
          <DataTable
            caption={`Spend by ${group}`}
            rows={d.rows}
            rowKey={(r) => r.key}
            initialSort={{ key: 'amountUsd', direction: 'desc' }}
            columns={[
              { key: 'key', label: group, sortValue: (r) => r.key, render: (r) => <code>{r.key}</code> },
              { key: 'amountUsd', label: 'Spend', align: 'right', sortValue: (r) => r.amountUsd, render: (r) => usd(r.amountUsd) },
              { key: 'units', label: 'Units', align: 'right', sortValue: (r) => r.units, render: (r) => r.units.toLocaleString() },
              { key: 'dayCount', label: 'Days', align: 'right', sortValue: (r) => r.dayCount },
            ]}
          />
        </>
      )}
    </Panel>
  );
}

/** One toolset's spend per day (`?toolset=`), picked from the toolsets that have spend in the range. */
export function ToolsetSpendPanel({ from, to }: { from: string; to: string }) {
  const { get, set } = useUrlState();
  const toolsets = useQuery(() => loadRollup({ from, to, group: 'toolset' }), [from, to]);
  const names = toolsets.data?.rows.map((r) => r.key) ?? [];
  const toolset = names.includes(get('toolset')) ? get('toolset') : (names[0] ?? '');
  return (
    <Panel
      title="Daily spend of one toolset"
      state={toolsets}
      minHeight={320}
      isEmpty={() => names.length === 0}
      empty="No toolset has spend in this range."
      actions={
        names.length > 0 && (
          <Field label="Toolset">
            <select value={toolset} onChange={(e) => set({ toolset: e.target.value })}>
              {names.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </Field>
        )
      }
    >
      {() => <ToolsetChart toolset={toolset} from={from} to={to} />}
    </Panel>
  );
}

function ToolsetChart({ toolset, from, to }: { toolset: string; from: string; to: string }) {
  const state = useQuery(() => loadByToolset({ toolset, from, to }), [toolset, from, to]);
  const series = useMemo(
    () => (state.data ? [{ label: `${state.data.toolset} (USD)`, points: state.data.series.map((p) => [dayStart(p.dimDate), p.amountUsd] as const) }] : []),
    [state.data],
  );
  if (state.error) return <ErrorNote error={state.error} onRetry={state.reload} />;
  if (!state.data) return <Busy label="Loading…" />;
  return (
    <>
      <p>
        <strong>{usd(state.data.total.amountUsd)}</strong> spent by <code>{state.data.toolset}</code> from {state.data.from} to {state.data.to} (exclusive).
      </p>
      <TimeChart label={`Daily spend of ${state.data.toolset}`} series={series} />
    </>
  );
}
