import { useCallback, useState } from 'react';
import { api, unwrap } from '../../../api/client';
import { useAction, useQuery } from '../../../app/useQuery';
import { useSession } from '../../../auth/session';
import { Busy, DataTable, ErrorNote, Field, Form, Panel, Time } from '../../../components';
import { Badge } from './badges';
import { CursorPager, useCursorStack } from './cursor';
import './empire.css';

type KeyStatus = 'active' | 'retired';

/** The toolsets' Ed25519 public keys, newest first; an active one can be retired. */
export function SigningKeys({ toolset, keysChanged, onRetired }: { toolset: string; keysChanged: number; onRetired: () => void }) {
  const { can } = useSession();
  const [status, setStatus] = useState<KeyStatus | ''>('');
  const pager = useCursorStack();
  const state = useQuery(
    () =>
      unwrap(
        api.GET('/api/observatory/v1/provenance/keys', {
          params: { query: { ...(toolset ? { toolset } : {}), ...(status ? { status } : {}), ...(pager.cursor ? { cursor: pager.cursor } : {}) } },
        }),
      ),
    [toolset, status, pager.cursor, keysChanged],
  );
  const retire = useAction(useCallback((id: string) => unwrap(api.POST('/api/observatory/v1/provenance/keys/{id}/retire', { params: { path: { id } }, body: {} })), []));
  const onRetire = (id: string, label: string) => {
    if (!window.confirm(`Retire key ${label}? Events it signs after now will be refused.`)) return;
    void retire.execute(id).then((r) => r && onRetired());
  };
  return (
    <Panel
      title="Signing keys"
      state={state}
      minHeight={140}
      isEmpty={(d) => d.keys.length === 0}
      empty={`No ${status ? `${status} ` : ''}signing keys${toolset ? ` for ${toolset}` : ''}. Until one is registered a toolset's events are admitted unsigned (compatibility mode), unless it is signed-only.`}
      actions={
        <>
          {retire.busy && <Busy label="Retiring…" />}
          <select
            aria-label="Key status"
            value={status}
            onChange={(e) => {
              setStatus(e.target.value as KeyStatus | '');
              pager.reset();
            }}
          >
            <option value="">Active and retired</option>
            <option value="active">Active</option>
            <option value="retired">Retired</option>
          </select>
        </>
      }
    >
      {(d) => (
        <>
          {retire.error && <ErrorNote error={retire.error} />}
          <DataTable
            caption="Signing keys"
            rows={d.keys}
            rowKey={(r) => r.id}
            pageSize={50}
            columns={[
              { key: 'toolset', label: 'Toolset', sortValue: (r) => r.toolset },
              { key: 'publicKeyB64', label: 'Public key', render: (r) => <code className="break">{r.publicKeyB64}</code> },
              { key: 'status', label: 'Status', sortValue: (r) => r.status, render: (r) => <Badge tone={r.status === 'active' ? 'ok' : 'neutral'}>{r.status}</Badge> },
              { key: 'createdAt', label: 'Registered', sortValue: (r) => r.createdAt, render: (r) => <Time at={r.createdAt} /> },
              { key: 'retiredAt', label: 'Retired', sortValue: (r) => r.retiredAt, render: (r) => <Time at={r.retiredAt} /> },
              ...(can('write:alerts')
                ? [
                    {
                      key: 'retire',
                      label: 'Change',
                      render: (r: (typeof d.keys)[number]) =>
                        r.status === 'active' ? (
                          <button type="button" className="danger" disabled={retire.busy} onClick={() => onRetire(r.id, r.publicKeyB64.slice(0, 12))} aria-label={`Retire key ${r.publicKeyB64}`}>
                            Retire
                          </button>
                        ) : null,
                    },
                  ]
                : []),
            ]}
          />
          <CursorPager pager={pager} nextCursor={d.nextCursor} label="Key pages" />
        </>
      )}
    </Panel>
  );
}

/** Registers an Ed25519 public key; several may be active during a rotation (the newest wins). */
export function RegisterKeyForm({ toolset: chosen, onRegistered }: { toolset: string; onRegistered: () => void }) {
  const [toolset, setToolset] = useState(chosen);
  const [publicKeyB64, setKey] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const register = useAction(
    useCallback(() => unwrap(api.POST('/api/observatory/v1/provenance/keys', { body: { toolset: toolset.trim(), publicKeyB64: publicKeyB64.trim() } })), [toolset, publicKeyB64]),
  );
  return (
    <section className="panel">
      <h2>Register a key</h2>
      <Form
        label="Register a signing key"
        submitLabel="Register the key"
        busy={register.busy}
        error={register.error}
        onSubmit={() =>
          void register.execute().then((r) => {
            if (!r?.key) return;
            setDone(`${r.key.toolset}: ${r.key.id}`);
            setKey('');
            onRegistered();
          })
        }
      >
        <Field label="Toolset">
          <input value={toolset} onChange={(e) => setToolset(e.target.value)} required />
        </Field>
        <Field label="Public key" hint="Base64 of the raw 32-byte Ed25519 public key (44 characters ending in =).">
          <input value={publicKeyB64} onChange={(e) => setKey(e.target.value)} required spellCheck={false} size={48} />
        </Field>
      </Form>
      {done && (
        <p className="result" role="status">
          Registered key {done}.
        </p>
      )}
    </section>
  );
}
