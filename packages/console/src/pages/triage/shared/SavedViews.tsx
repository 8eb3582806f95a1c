import { useQuery } from '../../../app/useQuery';
import { DataTable, Panel, Time } from '../../../components';
import { listSavedViews } from './api';
import { proposalHref } from './labels';
import { Link } from 'react-router';

/** The saved views accepted investigation proposals made: name, filters, the proposal behind each. */
export function SavedViews() {
  const views = useQuery(listSavedViews, []);
  return (
    <Panel
      title="Saved views"
      state={views}
      minHeight={120}
      isEmpty={(d) => d.views.length === 0}
      empty="No saved views yet: accepting an investigation proposal makes one."
    >
      {(d) => (
        <DataTable
          caption="Saved investigation views, newest first"
          rows={d.views}
          rowKey={(v) => v.id}
          pageSize={10}
          columns={[
            { key: 'name', label: 'View', sortValue: (v) => v.name, render: (v) => <strong>{v.name}</strong> },
            { key: 'toolset', label: 'Toolset', sortValue: (v) => v.toolset, render: (v) => v.toolset ?? <span className="muted">fleet</span> },
            {
              key: 'filters',
              label: 'Filters',
              render: (v) => (
                <span className="muted">
                  {Object.entries(v.filters)
                    .filter(([k, value]) => value !== null && k !== 'from' && k !== 'to')
                    .map(([k, value]) => `${k}=${String(value)}`)
                    .join(', ') || 'none'}
                  {' · '}
                  <Time at={v.filters.from} /> – <Time at={v.filters.to} />
                </span>
              ),
            },
            { key: 'createdAt', label: 'Saved', sortValue: (v) => v.createdAt, render: (v) => <Time at={v.createdAt} /> },
            { key: 'proposal', label: 'From', render: (v) => <Link to={proposalHref(v.proposalId)}>proposal</Link> },
          ]}
        />
      )}
    </Panel>
  );
}
