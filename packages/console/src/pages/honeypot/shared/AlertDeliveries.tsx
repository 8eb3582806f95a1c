import { api, unwrap } from '../../../api/client';
import { useQuery } from '../../../app/useQuery';
import { useUrlState } from '../../../app/urlState';
import { DataTable, FilterSelect, Panel, Time } from '../../../components';
import { describeDestination } from './predicate';
import type { DeliveryStatus } from './types';

const STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed'];
const TONE: Record<DeliveryStatus, string> = { pending: 'warn', delivered: 'ok', failed: 'bad' };

/** What the rules' notifications became, newest first; status and page in the address. */
export function AlertDeliveries({ tenant }: { tenant: string }) {
  const { get, set } = useUrlState();
  const status = (STATUSES as readonly string[]).includes(get('status')) ? (get('status') as DeliveryStatus) : null;
  const cursor = get('cursor');
  const state = useQuery(
    () =>
      unwrap(
        api.GET('/api/observatory/v1/honeypot/alerts/deliveries', {
          params: { query: { limit: 100, ...(tenant ? { tenant } : {}), ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [tenant, status, cursor],
    { refreshMs: 30_000 },
  );
  return (
    <Panel
      title="Deliveries"
      state={state}
      minHeight={200}
      actions={
        <FilterSelect label="Delivery status" value={status ?? ''} options={STATUSES} anyLabel="Every status" onChange={(value) => set({ status: value || null, cursor: null })} />
      }
    >
      {(d) => (
        <>
          <DataTable
            caption="Alert deliveries, newest first"
            rows={d.deliveries}
            rowKey={(r) => r.id}
            empty={status ? `No ${status} deliveries.` : 'Nothing has been sent yet: a delivery appears here when an enabled rule fires.'}
            columns={[
              { key: 'firedAt', label: 'Fired', sortValue: (r) => r.firedAt, render: (r) => <Time at={r.firedAt} /> },
              { key: 'rule', label: 'Rule', sortValue: (r) => r.rule.name, render: (r) => r.rule.name },
              { key: 'destination', label: 'Destination', render: (r) => describeDestination(r.destination) },
              { key: 'status', label: 'Status', sortValue: (r) => r.status, render: (r) => <span className={`badge ${TONE[r.status]}`}>{r.status}</span> },
              { key: 'attempts', label: 'Attempts', align: 'right', sortValue: (r) => r.attempts },
              { key: 'lastStatus', label: 'Last answer', sortValue: (r) => r.lastStatus, render: (r) => (r.lastStatus === null ? '—' : `HTTP ${r.lastStatus}`) },
              { key: 'lastError', label: 'Last error', render: (r) => r.lastError ?? '—' },
              { key: 'nextAttemptAt', label: 'Next attempt', sortValue: (r) => r.nextAttemptAt, render: (r) => <Time at={r.nextAttemptAt} /> },
              { key: 'deliveredAt', label: 'Delivered', sortValue: (r) => r.deliveredAt, render: (r) => <Time at={r.deliveredAt} /> },
            ]}
          />
          <div className="form-actions">
            {cursor && (
              <button type="button" onClick={() => set({ cursor: null })}>
                Newest
              </button>
            )}
            {d.nextCursor && (
              <button type="button" onClick={() => set({ cursor: d.nextCursor })}>
                Older deliveries
              </button>
            )}
          </div>
        </>
      )}
    </Panel>
  );
}
