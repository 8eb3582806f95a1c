import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { Can } from '../../auth/session';
import { DataTable, Panel } from '../../components';
import type { Answer } from './shared/api-types';
import { SlackTest } from './shared/SlackTest';

type Integration = Answer<'getIntegrationsStatus'>['integrations'][number];

const NAMES: Record<Integration['id'], string> = {
  chat: 'Chat webhook',
  metrics: 'Metrics forwarder',
  ci_dispatch: 'CI dispatch',
  csv_since: 'CSV export',
};

/** Which outbound integrations are configured (never their secrets), and a chat webhook test. */
export default function Integrations() {
  const status = useQuery(() => unwrap(api.GET('/api/observatory/v1/integrations/status')), []);
  return (
    <>
      <div className="page-head">
        <h1>Integrations</h1>
      </div>
      <Panel title="Configured integrations" state={status} minHeight={200}>
        {(d) => (
          <DataTable
            caption="Outbound integrations; set in the service's environment"
            rows={d.integrations}
            rowKey={(i) => i.id}
            columns={[
              { key: 'id', label: 'Integration', sortValue: (i) => NAMES[i.id], render: (i) => NAMES[i.id] },
              {
                key: 'configured',
                label: 'State',
                sortValue: (i) => (i.configured ? 0 : 1),
                render: (i) => <span className={i.configured ? 'badge ok' : 'badge warn'}>{i.configured ? 'configured' : 'not configured'}</span>,
              },
              { key: 'notes', label: 'Notes' },
            ]}
          />
        )}
      </Panel>
      <Can scope="write:alerts">
        <section className="panel">
          <h2>Test a chat webhook</h2>
          <SlackTest />
        </section>
      </Can>
    </>
  );
}
