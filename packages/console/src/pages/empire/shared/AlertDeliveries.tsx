import { useState } from 'react';
import { api, unwrap } from '../../../api/client';
import { useQuery } from '../../../app/useQuery';
import { DataTable, FilterSelect, Panel, Time } from '../../../components';
import { Badge } from './badges';
import { CursorPager, useCursorStack } from './cursor';

const STATUSES = ['pending', 'delivered', 'failed'] as const;
type Status = (typeof STATUSES)[number];
const TONES = { pending: 'warn', delivered: 'ok', failed: 'bad' } as const;

/** What the rules' notifications became, one row per firing and destination. */
export function AlertDeliveries({ toolset, tenant }: { toolset: string; tenant: string }) {
  const [status, setStatus] = useState<Status | ''>('');
  const pager = useCursorStack();
  const state = useQuery(
    () =>
      unwrap(
        api.GET('/api/observatory/v1/empire/{toolset}/alerts/deliveries', {
          params: { path: { toolset }, query: { ...(tenant ? { tenant } : {}), ...(status ? { status } : {}), ...(pager.cursor ? { cursor: pager.cursor } : {}) } },
        }),
      ),
    [toolset, tenant, status, pager.cursor],
    { refreshMs: 30_000 },
  );
  return (
    <Panel
      title="Deliveries"
      state={state}
      minHeight={120}
      isEmpty={(d) => d.deliveries.length === 0}
      empty={`No ${status ? `${status} ` : ''}notification for these rules: deliveries appear here once a rule fires.`}
      actions={
        <FilterSelect
          label="Delivery status"
          value={status}
          options={STATUSES}
          anyLabel="Every status"
          onChange={(value) => {
            setStatus(value as Status | '');
            pager.reset();
          }}
        />
      }
    >
      {(d) => (
        <>
          <DataTable
            caption="Alert deliveries"
            rows={d.deliveries}
            rowKey={(r) => r.id}
            pageSize={50}
            columns={[
              { key: 'rule', label: 'Rule', sortValue: (r) => r.rule.name, render: (r) => r.rule.name },
              { key: 'firedAt', label: 'Fired', sortValue: (r) => r.firedAt, render: (r) => <Time at={r.firedAt} /> },
              { key: 'destination', label: 'Destination', render: (r) => ('url' in r.destination ? `${r.destination.kind} ${r.destination.url}` : r.destination.kind) },
              { key: 'status', label: 'Status', sortValue: (r) => r.status, render: (r) => <Badge tone={TONES[r.status]}>{r.status}</Badge> },
              { key: 'attempts', label: 'Attempts', align: 'right', sortValue: (r) => r.attempts },
              {
                key: 'last',
                label: 'Last answer',
                render: (r) => (r.lastError ?? (r.lastStatus !== null ? `HTTP ${r.lastStatus}` : <span className="muted">—</span>)),
              },
              { key: 'next', label: 'Next attempt', sortValue: (r) => r.nextAttemptAt, render: (r) => <Time at={r.nextAttemptAt} /> },
              { key: 'deliveredAt', label: 'Delivered', sortValue: (r) => r.deliveredAt, render: (r) => <Time at={r.deliveredAt} /> },
            ]}
          />
          <CursorPager pager={pager} nextCursor={d.nextCursor} label="Delivery pages" />
        </>
      )}
    </Panel>
  );
}
