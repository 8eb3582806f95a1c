import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { Can, useSession } from '../../auth/session';
import { DataTable, Freshness, Panel, Time } from '../../components';
import { AlertDeliveries } from './shared/AlertDeliveries';
import { AlertRuleChange } from './shared/AlertRuleChange';
import { AlertRuleCreate } from './shared/AlertRuleCreate';
import { describeDestination, describePredicate } from './shared/predicate';
import { TenantPicker } from './shared/TenantPicker';
import type { AlertRule } from './shared/types';
import './shared/honeypot.css';

/** Alert rules (list, create, change) with their last firing, and what their notifications became. */
export default function Alerts() {
  const { get, set } = useUrlState();
  const tenant = get('tenant');
  const editing = get('edit');
  const rules = useQuery(
    () => unwrap(api.GET('/api/observatory/v1/honeypot/alerts', { params: { query: tenant ? { tenant } : {} } })),
    [tenant],
    { refreshMs: 60_000 },
  );
  const rule = rules.data?.rules.find((r) => r.id === editing) ?? null;
  const canWrite = useSession().can('write:alerts');
  return (
    <>
      <div className="page-head">
        <h1>Alert rules</h1>
        <div className="toolbar">
          <TenantPicker />
        </div>
      </div>
      <Panel
        title="Rules"
        state={rules}
        minHeight={180}
        isEmpty={(d) => d.rules.length === 0}
        empty={tenant ? `No rules for ${tenant} yet: create one below.` : 'No alert rules yet: create one below.'}
      >
        {(d) => (
          <>
            <Freshness freshness={d.freshness} />
            <DataTable
              caption="Alert rules"
              rows={d.rules}
              rowKey={(r) => r.id}
              initialSort={{ key: 'name', direction: 'asc' }}
              columns={[
                { key: 'name', label: 'Rule', sortValue: (r) => r.name, render: (r) => <strong>{r.name}</strong> },
                { key: 'tenant', label: 'Tenant', sortValue: (r) => r.tenant },
                { key: 'predicate', label: 'Fires when', sortValue: (r) => r.predicate.kind, render: (r) => describePredicate(r.predicate) },
                {
                  key: 'destinations',
                  label: 'Sends to',
                  render: (r) => (
                    <ul className="hp-chips">
                      {r.destinations.map((dest, i) => (
                        <li key={i}>{describeDestination(dest)}</li>
                      ))}
                    </ul>
                  ),
                },
                {
                  key: 'state',
                  label: 'State',
                  sortValue: (r) => (r.enabled ? 0 : 1),
                  render: (r) => (
                    <>
                      {r.enabled ? <span className="badge ok">enabled</span> : <span className="badge">disabled</span>}
                      {r.silenceUntil && Date.parse(r.silenceUntil) > Date.now() && (
                        <div className="muted">
                          silenced until <Time at={r.silenceUntil} />
                        </div>
                      )}
                    </>
                  ),
                },
                { key: 'lastFiredAt', label: 'Last fired', sortValue: (r) => r.lastFiredAt, render: (r) => (r.lastFiredAt ? <Time at={r.lastFiredAt} /> : <span className="muted">never</span>) },
                { key: 'evaluatedUntil', label: 'Evaluated to', sortValue: (r) => r.evaluatedUntil, render: (r) => <Time at={r.evaluatedUntil} /> },
                ...(canWrite
                  ? [
                      {
                        key: 'actions',
                        label: 'Change',
                        render: (r: AlertRule) => (
                          <button type="button" onClick={() => set({ edit: r.id })} aria-label={`Change ${r.name}`}>
                            Change
                          </button>
                        ),
                      },
                    ]
                  : []),
              ]}
            />
          </>
        )}
      </Panel>
      <Can scope="write:alerts">
        {rule && (
          <AlertRuleChange
            key={rule.id}
            rule={rule}
            onCancel={() => set({ edit: null })}
            onDone={() => {
              set({ edit: null });
              rules.reload();
            }}
          />
        )}
        {editing && !rule && rules.data && <p className="empty">The rule being changed is not in this list: pick every tenant, or its tenant.</p>}
        <section className="panel">
          <h2>New rule</h2>
          <AlertRuleCreate onCreated={() => rules.reload()} />
        </section>
      </Can>
      <AlertDeliveries tenant={tenant} />
    </>
  );
}
