import { api, unwrap } from '../../../api/client';
import { useQuery } from '../../../app/useQuery';
import { DataTable, Panel, Time } from '../../../components';
import { IncidentStatus, Severity } from './badges';
import { CursorPager, useCursorStack } from './cursor';
import './empire.css';

interface Filters {
  toolset: string;
  status: 'open' | 'acknowledged' | 'resolved' | undefined;
  severity: 'critical' | 'major' | 'minor' | undefined;
}

export function IncidentList({ toolset, status, severity, selected, onSelect }: Filters & { selected: string; onSelect: (id: string) => void }) {
  const pager = useCursorStack();
  const state = useQuery(
    () =>
      unwrap(
        api.GET('/api/observatory/v1/empire/incidents', {
          params: { query: { ...(toolset ? { toolset } : {}), ...(status ? { status } : {}), ...(severity ? { severity } : {}), ...(pager.cursor ? { cursor: pager.cursor } : {}) } },
        }),
      ),
    [toolset, status, severity, pager.cursor],
    { refreshMs: 30_000 },
  );
  return (
    <Panel
      title="Incidents, newest first"
      state={state}
      minHeight={240}
      isEmpty={(d) => d.incidents.length === 0}
      empty="No incident matches. Incidents are opened by the forecaster (a toolset scoring above 0.7 on 3 runs in a row) and by accepted triage proposals; widen the filters to see older ones."
    >
      {(d) => (
        <>
          <DataTable
            caption="Incidents"
            rows={d.incidents}
            rowKey={(r) => r.id}
            pageSize={50}
            columns={[
              {
                key: 'title',
                label: 'Incident',
                sortValue: (r) => r.title,
                render: (r) => (
                  <button type="button" className="link" aria-pressed={r.id === selected} onClick={() => onSelect(r.id)}>
                    {r.title}
                  </button>
                ),
              },
              { key: 'toolset', label: 'Toolset', sortValue: (r) => r.toolset },
              { key: 'severity', label: 'Severity', sortValue: (r) => r.severity, render: (r) => <Severity severity={r.severity} /> },
              { key: 'status', label: 'Status', sortValue: (r) => r.status, render: (r) => <IncidentStatus status={r.status} /> },
              { key: 'source', label: 'Opened by', sortValue: (r) => r.source },
              { key: 'openedAt', label: 'Opened', sortValue: (r) => r.openedAt, render: (r) => <Time at={r.openedAt} /> },
              { key: 'resolvedAt', label: 'Resolved', sortValue: (r) => r.resolvedAt, render: (r) => <Time at={r.resolvedAt} /> },
            ]}
          />
          <CursorPager pager={pager} nextCursor={d.nextCursor} label="Incident pages" />
        </>
      )}
    </Panel>
  );
}
