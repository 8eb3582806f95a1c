import { useCallback, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useAction, useQuery } from '../../app/useQuery';
import { useSession } from '../../auth/session';
import { ErrorNote, Panel } from '../../components';
import type { Answer } from './shared/api-types';
import { ConfirmButton } from './shared/ConfirmButton';
import { ShownOnce } from './shared/ShownOnce';
import { type NewToken, TokenForm } from './shared/TokenForm';
import { TokenTable } from './shared/TokenTable';

/** Your API tokens: list, create (the plaintext shown once) and revoke. */
export default function Tokens() {
  const { account } = useSession();
  const tokens = useQuery(() => unwrap(api.GET('/api/observatory/v1/tokens')), []);
  const [created, setCreated] = useState<Answer<'createToken'> | null>(null);
  const [revoking, setRevoking] = useState<string | null>(null);

  const create = useAction(useCallback((body: NewToken) => unwrap(api.POST('/api/observatory/v1/tokens', { body })), []));
  const revoke = useAction(
    useCallback((id: string) => unwrap(api.POST('/api/observatory/v1/tokens/{id}/revoke', { params: { path: { id } }, body: {} })), []),
  );

  const onCreate = async (body: NewToken) => {
    const answer = await create.execute(body);
    if (answer) {
      setCreated(answer);
      tokens.reload();
    }
    return answer !== null;
  };
  const onRevoke = async (id: string) => {
    setRevoking(id);
    await revoke.execute(id);
    setRevoking(null);
    tokens.reload();
  };

  return (
    <>
      <div className="page-head">
        <h1>API tokens</h1>
      </div>
      {created && (
        <ShownOnce
          title={`Token “${created.name}” created`}
          value={created.token}
          note="Send it as Authorization: Bearer <token>."
          onDismiss={() => setCreated(null)}
        />
      )}
      <Panel title="Your tokens" state={tokens} minHeight={160}>
        {(d) => (
          <>
            {revoke.error && <ErrorNote error={revoke.error} />}
            <TokenTable
              caption="Tokens issued to you"
              tokens={d.tokens}
              action={(t) =>
                t.revokedAt ? null : (
                  <ConfirmButton
                    label="Revoke"
                    question={`Revoke “${t.name}”? Anything using it stops working at once.`}
                    confirmLabel="Yes, revoke"
                    busy={revoking === t.id}
                    onConfirm={() => void onRevoke(t.id)}
                  />
                )
              }
            />
          </>
        )}
      </Panel>
      <section className="panel">
        <h2>Create a token</h2>
        <p className="muted">A token carries at most the scopes your own credential holds.</p>
        <TokenForm
          label="Create a token"
          submitLabel="Create token"
          offered={account ? account.scopes : []}
          unofferedReason="your credential lacks it"
          busy={create.busy}
          error={create.error}
          onSubmit={onCreate}
        />
      </section>
    </>
  );
}
