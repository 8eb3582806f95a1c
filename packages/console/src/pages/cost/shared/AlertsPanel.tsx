import { useAction, useQuery } from '../../../app/useQuery';
import { Can } from '../../../auth/session';
import { Busy, DataTable, ErrorNote, Panel, Segmented, Time, useChoiceParam } from '../../../components';
import { acknowledgeAlert, ALERT_FILTERS, type AlertFilter, type CostAlert, loadAlerts, resolveAlert, usd } from './api';

const STATUS_BADGE: Record<CostAlert['status'], string> = { open: 'badge bad', acknowledged: 'badge warn', resolved: 'badge ok' };

/** Acknowledge and resolve buttons of one alert, with their progress and the service's refusal. */
function AlertActions({ alert, onDone }: { alert: CostAlert; onDone: () => void }) {
  const ack = useAction(acknowledgeAlert);
  const resolve = useAction(resolveAlert);
  if (alert.status === 'resolved') return <span className="muted">—</span>;
  const run = async (action: typeof ack | typeof resolve) => {
    if (await action.execute(alert.id)) onDone();
  };
  return (
    <Can scope="write:alerts">
      <span className="toolbar">
        {alert.status === 'open' && (
          <button type="button" disabled={ack.busy || resolve.busy} onClick={() => void run(ack)} aria-label={`Acknowledge the ${alert.thresholdPct}% alert of ${alert.scopeKey}`}>
            Acknowledge
          </button>
        )}
        <button type="button" disabled={ack.busy || resolve.busy} onClick={() => void run(resolve)} aria-label={`Resolve the ${alert.thresholdPct}% alert of ${alert.scopeKey}`}>
          Resolve
        </button>
        {(ack.busy || resolve.busy) && <Busy label="Saving…" />}
      </span>
      {ack.error && <ErrorNote error={ack.error} />}
      {resolve.error && <ErrorNote error={resolve.error} />}
    </Can>
  );
}

/** Cost alerts of one status (`?alerts=`), newest first, with acknowledge and resolve. */
export function AlertsPanel({ refreshKey, onChanged }: { refreshKey: number; onChanged: () => void }) {
  const status: AlertFilter = useChoiceParam('alerts', ALERT_FILTERS, 'open');
  const state = useQuery(() => loadAlerts(status), [status, refreshKey], { refreshMs: 60_000 });
  return (
    <Panel
      title={state.data ? `Cost alerts (${state.data.openCount} open)` : 'Cost alerts'}
      state={state}
      minHeight={180}
      isEmpty={(d) => d.alerts.length === 0}
      empty={status === 'open' ? 'No open cost alerts: every budget is under its thresholds, or its alerts were handled.' : `No ${status === 'all' ? '' : `${status} `}cost alerts.`}
      actions={
        <Segmented label="Alert status" param="alerts" options={ALERT_FILTERS} fallback="open" />
      }
    >
      {(d) => (
        <DataTable
          caption="Cost alerts"
          rows={d.alerts}
          rowKey={(a) => a.id}
          columns={[
            { key: 'firedAt', label: 'Fired', sortValue: (a) => a.firedAt, render: (a) => <Time at={a.firedAt} /> },
            { key: 'scope', label: 'Budget', sortValue: (a) => `${a.scope}:${a.scopeKey}`, render: (a) => <code>{a.scope === 'empire' ? 'empire' : `${a.scope} ${a.scopeKey}`}</code> },
            { key: 'month', label: 'Month', render: (a) => a.monthBucket },
            { key: 'threshold', label: 'Threshold', align: 'right', sortValue: (a) => a.thresholdPct, render: (a) => `${a.thresholdPct}%` },
            { key: 'observed', label: 'Spent when fired', align: 'right', sortValue: (a) => a.observedUsd, render: (a) => `${usd(a.observedUsd)} of ${usd(a.monthlyUsd)}` },
            { key: 'status', label: 'Status', sortValue: (a) => a.status, render: (a) => <span className={STATUS_BADGE[a.status]}>{a.status}</span> },
            { key: 'acked', label: 'Acknowledged', render: (a) => (a.ackedAt ? <>{a.ackedBy} <Time at={a.ackedAt} /></> : <span className="muted">—</span>) },
            { key: 'actions', label: 'Actions', render: (a) => <AlertActions alert={a} onDone={onChanged} /> },
          ]}
        />
      )}
    </Panel>
  );
}
