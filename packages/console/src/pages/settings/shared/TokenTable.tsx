import type { ReactNode } from 'react';
import { type Column, DataTable, Time } from '../../../components';
import type { Answer } from './api-types';

export type TokenView = Answer<'listTokens'>['tokens'][number];

export function Chips({ items, none }: { items: readonly string[] | null; none: string }) {
  if (!items || items.length === 0) return <span className="muted">{none}</span>;
  return (
    <span className="chips">
      {items.map((item) => (
        <code key={item}>{item}</code>
      ))}
    </span>
  );
}

export function TokenStatus({ revokedAt }: { revokedAt: string | null }) {
  return revokedAt ? (
    <span className="badge bad">
      revoked <Time at={revokedAt} />
    </span>
  ) : (
    <span className="badge ok">active</span>
  );
}

/** Tokens by name, prefix, scopes, binding and use; `action` adds a last column (e.g. revoke). */
export function TokenTable({ tokens, action, caption }: { tokens: readonly TokenView[]; action?: (token: TokenView) => ReactNode; caption: string }) {
  const columns: Column<TokenView>[] = [
    { key: 'name', label: 'Name', sortValue: (t) => t.name },
    { key: 'prefix', label: 'Prefix', render: (t) => <code>{t.prefix}…</code> },
    { key: 'scopes', label: 'Scopes', render: (t) => <Chips items={t.scopes} none="none" /> },
    { key: 'toolsets', label: 'Toolsets', render: (t) => <Chips items={t.toolsets} none="not bound" /> },
    { key: 'createdAt', label: 'Created', sortValue: (t) => t.createdAt, render: (t) => <Time at={t.createdAt} /> },
    { key: 'lastUsedAt', label: 'Last used', sortValue: (t) => t.lastUsedAt, render: (t) => (t.lastUsedAt ? <Time at={t.lastUsedAt} /> : <span className="muted">never</span>) },
    { key: 'status', label: 'Status', sortValue: (t) => (t.revokedAt ? 1 : 0), render: (t) => <TokenStatus revokedAt={t.revokedAt} /> },
  ];
  if (action) columns.push({ key: 'action', label: 'Action', render: action });
  return <DataTable caption={caption} columns={columns} rows={tokens} rowKey={(t) => t.id} empty="No tokens yet: create one below." />;
}
