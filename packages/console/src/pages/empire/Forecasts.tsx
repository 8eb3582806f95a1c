import { useCallback, useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useAction, useQuery } from '../../app/useQuery';
import { Can } from '../../auth/session';
import { Busy, DataTable, ErrorNote, Freshness, Panel, Time } from '../../components';
import { ForecastLevel } from './shared/badges';
import './shared/empire.css';

/** The forecaster's latest score per toolset, and a button to run it now. */
export default function Forecasts() {
  const state = useQuery(() => unwrap(api.GET('/api/observatory/v1/empire/forecast')), [], { refreshMs: 60_000 });
  return (
    <>
      <div className="page-head">
        <h1>Forecasts</h1>
      </div>
      <Can scope="write:alerts">
        <RunForecaster onRun={state.reload} />
      </Can>
      <Panel
        title="Latest score per toolset"
        state={state}
        minHeight={240}
        isEmpty={(d) => d.forecasts.length === 0}
        empty="No forecast yet: the forecast job scores every 15 minutes each toolset that sent events in the last 7 days. Run it now, or wait for the next run."
      >
        {(d) => (
          <>
            <Freshness freshness={d.freshness} />
            <p className="muted">
              A score compares the last 3 complete hours with the 165 before them: watch from 0.4, alert above 0.7. A toolset above 0.7 on 3 runs in a row gets one minor
              incident.
            </p>
            <DataTable
              caption="Forecasts"
              rows={d.forecasts}
              rowKey={(r) => r.toolset}
              initialSort={{ key: 'score', direction: 'desc' }}
              columns={[
                {
                  key: 'toolset',
                  label: 'Toolset',
                  sortValue: (r) => r.toolset,
                  render: (r) => <Link to={`/empire/toolset?toolset=${encodeURIComponent(r.toolset)}&window=7d`}>{r.toolset}</Link>,
                },
                { key: 'level', label: 'Level', sortValue: (r) => r.level, render: (r) => <ForecastLevel level={r.level} /> },
                { key: 'score', label: 'Score', align: 'right', sortValue: (r) => r.score, render: (r) => r.score.toFixed(2) },
                { key: 'direction', label: 'Direction', sortValue: (r) => r.direction },
                { key: 'recentMean', label: 'Recent events/h', align: 'right', sortValue: (r) => r.recentMean, render: (r) => r.recentMean.toLocaleString(undefined, { maximumFractionDigits: 1 }) },
                { key: 'baselineMean', label: 'Baseline events/h', align: 'right', sortValue: (r) => r.baselineMean, render: (r) => r.baselineMean.toLocaleString(undefined, { maximumFractionDigits: 1 }) },
                { key: 'computedAt', label: 'Computed', sortValue: (r) => r.computedAt, render: (r) => <Time at={r.computedAt} /> },
                { key: 'runId', label: 'Run', render: (r) => <code title={r.runId}>{r.runId.slice(0, 8)}</code> },
              ]}
            />
          </>
        )}
      </Panel>
    </>
  );
}

function RunForecaster({ onRun }: { onRun: () => void }) {
  const run = useAction(useCallback(() => unwrap(api.POST('/api/observatory/v1/empire/forecast', { body: {} })), []));
  const [last, setLast] = useState<Awaited<ReturnType<typeof run.execute>>>(null);
  return (
    <section className="panel">
      <div className="toolbar">
        <button
          type="button"
          className="primary"
          disabled={run.busy}
          onClick={() =>
            void run.execute().then((r) => {
              if (!r) return;
              setLast(r);
              onRun();
            })
          }
        >
          Run the forecaster now
        </button>
        {run.busy && <Busy label="Scoring every toolset's last 7 days…" />}
        <span className="muted">It also runs by itself every 15 minutes.</span>
      </div>
      {run.error && <ErrorNote error={run.error} />}
      {last && (
        <p className="result" role="status">
          Run <code>{last.runId}</code> scored {last.forecastsCreated} toolset{last.forecastsCreated === 1 ? '' : 's'}
          {last.latchedIncidentIds.length === 0 ? (
            ' and opened no incident.'
          ) : (
            <>
              {' '}
              and opened {last.latchedIncidentIds.length} incident{last.latchedIncidentIds.length === 1 ? '' : 's'}:{' '}
              {last.latchedIncidentIds.map((id) => (
                <Link key={id} to={`/empire/incidents?incident=${id}`}>
                  {id.slice(0, 8)}{' '}
                </Link>
              ))}
            </>
          )}
        </p>
      )}
    </section>
  );
}
