import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useAction } from '../../app/useQuery';
import { Can, useSession } from '../../auth/session';
import { DataTable, ErrorNote, Panel, Time } from '../../components';
import { ConfirmButton } from './shared/ConfirmButton';
import { SecretOnce } from './shared/SecretOnce';
import { type NewSecret, TenantCreate } from './shared/TenantCreate';
import { useTenants } from './shared/tenants';
import type { Tenant } from './shared/types';
import './shared/honeypot.css';

/** Honeypot tenants: create one, rotate its signing secret, disable or enable it. */
export default function Tenants() {
  const tenants = useTenants();
  const [secret, setSecret] = useState<NewSecret | null>(null);
  const canWrite = useSession().can('write:tenants');
  // Which tenant's action is running (`slug:action`), so only that button shows progress.
  const [working, setWorking] = useState<string | null>(null);
  const act = useAction(async (slug: string, what: 'rotate' | 'disable' | 'enable') => {
    setWorking(`${slug}:${what}`);
    try {
      if (what === 'rotate') {
        const answer = await unwrap(api.POST('/api/observatory/v1/honeypot/tenants/{slug}/rotate-secret', { params: { path: { slug } }, body: {} }));
        setSecret({ title: `New signing secret of ${slug}`, secret: answer.signingSecret, previousValidUntil: answer.previousValidUntil });
      } else if (what === 'disable') {
        await unwrap(api.POST('/api/observatory/v1/honeypot/tenants/{slug}/disable', { params: { path: { slug } }, body: {} }));
      } else {
        await unwrap(api.POST('/api/observatory/v1/honeypot/tenants/{slug}/enable', { params: { path: { slug } }, body: {} }));
      }
      tenants.reload();
    } finally {
      setWorking(null);
    }
  });
  const actions = (t: Tenant) => (
    <span className="hp-row-actions">
      <ConfirmButton
        label="Rotate secret"
        question={`Issue a new secret for ${t.slug}? The current one keeps working for 24 hours.`}
        confirmLabel="Rotate"
        busy={working === `${t.slug}:rotate`}
        onConfirm={() => void act.execute(t.slug, 'rotate')}
      />
      {t.disabledAt === null ? (
        <ConfirmButton
          label="Disable"
          question={`Disable ${t.slug}? Its ingest will be refused until it is enabled again.`}
          confirmLabel="Disable"
          danger
          busy={working === `${t.slug}:disable`}
          onConfirm={() => void act.execute(t.slug, 'disable')}
        />
      ) : (
        <button type="button" disabled={act.busy} onClick={() => void act.execute(t.slug, 'enable')}>
          Enable
        </button>
      )}
    </span>
  );
  return (
    <>
      <div className="page-head">
        <h1>Tenants</h1>
      </div>
      {secret && <SecretOnce {...secret} onDismiss={() => setSecret(null)} />}
      {act.error && <ErrorNote error={act.error} />}
      <Panel title="Tenants" state={tenants} minHeight={160} isEmpty={(d) => d.tenants.length === 0} empty="No tenants yet: create the first one below.">
        {(d) => (
          <DataTable
            caption="Honeypot tenants"
            rows={d.tenants}
            rowKey={(t) => t.slug}
            initialSort={{ key: 'slug', direction: 'asc' }}
            columns={[
              { key: 'slug', label: 'Slug', sortValue: (t) => t.slug, render: (t) => <code>{t.slug}</code> },
              { key: 'name', label: 'Name', sortValue: (t) => t.name },
              {
                key: 'state',
                label: 'State',
                sortValue: (t) => t.disabledAt ?? '',
                render: (t) =>
                  t.disabledAt ? (
                    <>
                      <span className="badge bad">disabled</span> <span className="muted">since <Time at={t.disabledAt} /></span>
                    </>
                  ) : (
                    <span className="badge ok">enabled</span>
                  ),
              },
              { key: 'createdAt', label: 'Created', sortValue: (t) => t.createdAt, render: (t) => <Time at={t.createdAt} /> },
              { key: 'notes', label: 'Notes', render: (t) => t.notes ?? <span className="muted">—</span> },
              ...(canWrite ? [{ key: 'actions', label: 'Actions', render: actions }] : []),
            ]}
          />
        )}
      </Panel>
      <Can scope="write:tenants">
        <section className="panel">
          <h2>New tenant</h2>
          <TenantCreate
            onCreated={(created) => {
              setSecret(created);
              tenants.reload();
            }}
          />
        </section>
      </Can>
    </>
  );
}
