import { useCallback } from 'react';
import { api, unwrap } from '../../../api/client';
import { useAction, useQuery } from '../../../app/useQuery';
import { useSession } from '../../../auth/session';
import { Busy, DataTable, ErrorNote, Freshness, Panel, Time } from '../../../components';
import { Badge } from './badges';
import { describePredicate } from './predicates';

const HOUR = 3_600_000;

interface Change {
  id: string;
  enabled?: boolean;
  silenceUntil?: string | null;
}

export function AlertRules({ toolset, tenant, created }: { toolset: string; tenant: string; created: number }) {
  const { can } = useSession();
  const state = useQuery(
    () => unwrap(api.GET('/api/observatory/v1/empire/{toolset}/alerts', { params: { path: { toolset }, query: tenant ? { tenant } : {} } })),
    [toolset, tenant, created],
    { refreshMs: 60_000 },
  );
  const change = useAction(
    useCallback(({ id, ...body }: Change) => unwrap(api.POST('/api/observatory/v1/empire/alerts/{id}', { params: { path: { id } }, body })), []),
  );
  const apply = (c: Change) => void change.execute(c).then((r) => r && state.reload());
  const writer = can('write:alerts');
  return (
    <Panel
      title="Rules"
      state={state}
      minHeight={200}
      isEmpty={(d) => d.rules.length === 0}
      empty={`${toolset} has no alert rules${tenant ? ` for tenant ${tenant}` : ''}. Create one below (needs write:alerts).`}
      actions={change.busy ? <Busy label="Saving…" /> : null}
    >
      {(d) => (
        <>
          <Freshness freshness={d.freshness} />
          {change.error && <ErrorNote error={change.error} />}
          <DataTable
            caption="Alert rules"
            rows={d.rules}
            rowKey={(r) => r.id}
            columns={[
              { key: 'name', label: 'Name', sortValue: (r) => r.name },
              { key: 'predicate', label: 'Fires when', render: (r) => describePredicate(r.predicate) },
              { key: 'tenant', label: 'Tenant', sortValue: (r) => r.tenant, render: (r) => r.tenant ?? <span className="muted">every tenant</span> },
              {
                key: 'state',
                label: 'State',
                sortValue: (r) => (r.enabled ? 1 : 0),
                render: (r) => {
                  const silenced = r.silenceUntil !== null && Date.parse(r.silenceUntil) > Date.now();
                  return (
                    <>
                      <Badge tone={r.enabled ? 'ok' : 'neutral'}>{r.enabled ? 'enabled' : 'disabled'}</Badge>{' '}
                      {silenced && (
                        <span className="muted">
                          silenced until <Time at={r.silenceUntil} />
                        </span>
                      )}
                    </>
                  );
                },
              },
              { key: 'destinations', label: 'Sends to', render: (r) => r.destinations.map((x) => ('url' in x ? `${x.kind} ${x.url}` : x.kind)).join(', ') },
              { key: 'lastFiredAt', label: 'Last fired', sortValue: (r) => r.lastFiredAt, render: (r) => <Time at={r.lastFiredAt} /> },
              { key: 'evaluatedUntil', label: 'Evaluated up to', sortValue: (r) => r.evaluatedUntil, render: (r) => <Time at={r.evaluatedUntil} /> },
              ...(writer
                ? [
                    {
                      key: 'actions',
                      label: 'Change',
                      render: (r: (typeof d.rules)[number]) => {
                        const silenced = r.silenceUntil !== null && Date.parse(r.silenceUntil) > Date.now();
                        return (
                          <span className="row-actions">
                            <button type="button" disabled={change.busy} onClick={() => apply({ id: r.id, enabled: !r.enabled })} aria-label={`${r.enabled ? 'Disable' : 'Enable'} ${r.name}`}>
                              {r.enabled ? 'Disable' : 'Enable'}
                            </button>
                            {silenced ? (
                              <button type="button" disabled={change.busy} onClick={() => apply({ id: r.id, silenceUntil: null })} aria-label={`Lift the silence of ${r.name}`}>
                                Lift silence
                              </button>
                            ) : (
                              <button
                                type="button"
                                disabled={change.busy}
                                onClick={() => apply({ id: r.id, silenceUntil: new Date(Date.now() + HOUR).toISOString() })}
                                aria-label={`Silence ${r.name} for an hour`}
                              >
                                Silence 1 h
                              </button>
                            )}
                          </span>
                        );
                      },
                    },
                  ]
                : []),
            ]}
          />
        </>
      )}
    </Panel>
  );
}
