import { useCallback, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useUrlState } from '../../app/urlState';
import { useAction, useQuery } from '../../app/useQuery';
import { Can, useSession } from '../../auth/session';
import { type Column, DataTable, Panel, Time } from '../../components';
import type { Answer } from './shared/api-types';
import { type NewOperator, OperatorForm } from './shared/OperatorForm';
import { ShownOnce } from './shared/ShownOnce';
import { type NewToken, TokenForm } from './shared/TokenForm';
import { Chips } from './shared/TokenTable';

type Operator = Answer<'listOperators'>['operators'][number];
interface Issued {
  title: string;
  token: string;
}

/** Operators: who they are and what they hold; add one (its first token shown once); issue a token for one. */
export default function Operators() {
  const { account } = useSession();
  const { get, set } = useUrlState();
  const issueFor = get('issue');
  const operators = useQuery(() => unwrap(api.GET('/api/observatory/v1/operators')), []);
  const [issued, setIssued] = useState<Issued | null>(null);

  const add = useAction(useCallback((body: NewOperator) => unwrap(api.POST('/api/observatory/v1/operators', { body })), []));
  const issue = useAction(
    useCallback(
      (username: string, body: NewToken) => unwrap(api.POST('/api/observatory/v1/operators/{username}/tokens', { params: { path: { username } }, body })),
      [],
    ),
  );

  const onAdd = async (body: NewOperator) => {
    const answer = await add.execute(body);
    if (!answer) return false;
    setIssued({ title: `Operator “${answer.operator.username}” added: their first token`, token: answer.firstToken.token });
    operators.reload();
    return true;
  };
  const onIssue = async (username: string, body: NewToken) => {
    const answer = await issue.execute(username, body);
    if (!answer) return false;
    setIssued({ title: `Token “${answer.name}” issued for ${username}`, token: answer.token });
    set({ issue: null });
    return true;
  };

  const held = account ? account.scopes : [];
  const columns: Column<Operator>[] = [
    { key: 'username', label: 'Username', sortValue: (o) => o.username, render: (o) => <code>{o.username}</code> },
    { key: 'displayName', label: 'Name', sortValue: (o) => o.displayName },
    { key: 'scopes', label: 'Scopes', render: (o) => <Chips items={o.scopes} none="none" /> },
    { key: 'createdAt', label: 'Added', sortValue: (o) => o.createdAt, render: (o) => <Time at={o.createdAt} /> },
    {
      key: 'status',
      label: 'Status',
      sortValue: (o) => (o.disabledAt ? 1 : 0),
      render: (o) =>
        o.disabledAt ? (
          <span className="badge bad">
            disabled <Time at={o.disabledAt} />
          </span>
        ) : (
          <span className="badge ok">active</span>
        ),
    },
    {
      key: 'action',
      label: 'Action',
      render: (o) =>
        o.disabledAt ? null : (
          <button
            type="button"
            aria-label={`Issue a token for ${o.username}`}
            aria-pressed={issueFor === o.username}
            onClick={() => set({ issue: issueFor === o.username ? null : o.username })}
          >
            Issue a token
          </button>
        ),
    },
  ];

  return (
    <>
      <div className="page-head">
        <h1>Operators</h1>
      </div>
      {issued && <ShownOnce title={issued.title} value={issued.token} note="Hand it to the operator over a private channel." onDismiss={() => setIssued(null)} />}
      <Panel title="Operators" state={operators} minHeight={160}>
        {(d) => {
          const target = d.operators.find((o) => o.username === issueFor && o.disabledAt === null);
          return (
            <>
              <DataTable caption="Every operator" columns={columns} rows={d.operators} rowKey={(o) => o.id} empty="No operators yet: add one below." />
              {target && (
                <section className="panel">
                  <h2>Issue a token for {target.username}</h2>
                  <p className="muted">
                    The token acts as {target.username}: you must hold every scope they hold, and it can carry only scopes you both hold (listed below).
                  </p>
                  <TokenForm
                    key={target.username}
                    label={`Issue a token for ${target.username}`}
                    submitLabel="Issue token"
                    offered={target.scopes.filter((s) => held.includes(s))}
                    unofferedReason={`not held by both you and ${target.username}`}
                    onlyOffered
                    busy={issue.busy}
                    error={issue.error}
                    onSubmit={(body) => onIssue(target.username, body)}
                  />
                </section>
              )}
            </>
          );
        }}
      </Panel>
      <Can scope="write:tokens">
        <section className="panel">
          <h2>Add an operator</h2>
          <p className="muted">Their first token, carrying the same scopes, is shown once after they are added.</p>
          <OperatorForm offered={held} busy={add.busy} error={add.error} onSubmit={onAdd} />
        </section>
      </Can>
    </>
  );
}
