import { useCallback, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useAction, useQuery } from '../../app/useQuery';
import { type Column, DataTable, ErrorNote, Panel, Time } from '../../components';
import type { Answer } from './shared/api-types';
import { ConfirmButton } from './shared/ConfirmButton';
import { PasskeyRegister } from './shared/PasskeyRegister';
import { Chips, TokenStatus } from './shared/TokenTable';

type Passkey = Answer<'listPasskeys'>['passkeys'][number];

/** Who you are signed in as, your passkeys (register one, revoke one). */
export default function Account() {
  const who = useQuery(() => unwrap(api.GET('/api/observatory/v1/account')), []);
  const passkeys = useQuery(() => unwrap(api.GET('/api/observatory/v1/account/passkeys')), []);
  const [registered, setRegistered] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<string | null>(null);
  const revoke = useAction(
    useCallback((id: string) => unwrap(api.POST('/api/observatory/v1/account/passkeys/{id}/revoke', { params: { path: { id } }, body: {} })), []),
  );
  const onRevoke = async (id: string) => {
    setRevoking(id);
    await revoke.execute(id);
    setRevoking(null);
    passkeys.reload();
  };

  const columns: Column<Passkey>[] = [
    { key: 'deviceLabel', label: 'Device', sortValue: (p) => p.deviceLabel },
    { key: 'credentialIdPrefix', label: 'Credential', render: (p) => <code>{p.credentialIdPrefix}…</code> },
    { key: 'deviceType', label: 'Kind', render: (p) => `${p.deviceType === 'multiDevice' ? 'synced' : 'single device'}${p.backedUp ? ', backed up' : ''}` },
    { key: 'transports', label: 'Transports', render: (p) => <Chips items={p.transports} none="not reported" /> },
    { key: 'createdAt', label: 'Registered', sortValue: (p) => p.createdAt, render: (p) => <Time at={p.createdAt} /> },
    { key: 'lastUsedAt', label: 'Last used', sortValue: (p) => p.lastUsedAt, render: (p) => (p.lastUsedAt ? <Time at={p.lastUsedAt} /> : <span className="muted">never</span>) },
    { key: 'status', label: 'Status', sortValue: (p) => (p.revokedAt ? 1 : 0), render: (p) => <TokenStatus revokedAt={p.revokedAt} /> },
    {
      key: 'action',
      label: 'Action',
      render: (p) =>
        p.revokedAt ? null : (
          <ConfirmButton
            label="Revoke"
            question={`Revoke “${p.deviceLabel}”? It can no longer sign in, and the sessions it opened end.`}
            confirmLabel="Yes, revoke"
            busy={revoking === p.id}
            onConfirm={() => void onRevoke(p.id)}
          />
        ),
    },
  ];

  return (
    <>
      <div className="page-head">
        <h1>Account</h1>
      </div>
      <Panel title="Signed in as" state={who} minHeight={120}>
        {(a) => (
          <dl className="facts">
            <dt>Username</dt>
            <dd>
              <strong>{a.username}</strong>
            </dd>
            <dt>Operator id</dt>
            <dd>
              <code>{a.userId}</code>
            </dd>
            <dt>Signed in with</dt>
            <dd>{a.via === 'session' ? 'a passkey (browser session)' : 'an API token'}</dd>
            <dt>Scopes</dt>
            <dd>
              <Chips items={a.scopes} none="none: this credential can only read its own account" />
            </dd>
          </dl>
        )}
      </Panel>
      <Panel
        title="Passkeys"
        state={passkeys}
        minHeight={140}
        isEmpty={(d) => d.passkeys.length === 0}
        empty="You have no passkeys yet: register one below to sign in without a token."
      >
        {(d) => (
          <>
            {revoke.error && <ErrorNote error={revoke.error} />}
            <DataTable caption="Your passkeys, newest first" columns={columns} rows={d.passkeys} rowKey={(p) => p.id} />
          </>
        )}
      </Panel>
      <section className="panel">
        <h2>Register a passkey</h2>
        <p className="muted">
          Your browser asks your authenticator (Touch ID, Windows Hello, a security key, a phone) to create a passkey for this console. A passkey session
          carries the scopes of the credential you register it with. With a token, that token must carry every scope you hold and not be bound to toolsets.
        </p>
        {registered && (
          <p role="status" className="badge ok">
            Passkey “{registered}” registered.
          </p>
        )}
        <PasskeyRegister
          onRegistered={(label) => {
            setRegistered(label);
            passkeys.reload();
          }}
        />
      </section>
    </>
  );
}
