import { useState } from 'react';
import type { ApiError } from '../../../api/client';
import { Field, Form } from '../../../components';
import { ScopeChecklist } from './ScopeChecklist';
import type { ScopeName } from './scopes';
import './settings.css';

export interface NewToken {
  name: string;
  scopes: ScopeName[];
  toolsets?: string[];
}

const NO_SCOPES: ApiError = { status: 400, reason: 'no-scopes', human: 'Pick at least one scope for the token.' };

/** Splits "edge-eu, edge-us" or "edge-eu edge-us" into toolset names; none: not bound. */
function toolsetList(text: string): string[] | undefined {
  const names = [...new Set(text.split(/[\s,]+/).filter((n) => n !== ''))];
  return names.length === 0 ? undefined : names;
}

/**
 * A new token's name, scopes and optional toolset binding. `onSubmit` answers whether the token
 * was issued; the fields clear only then, so a refused request can be corrected.
 */
export function TokenForm({
  label,
  submitLabel,
  offered,
  unofferedReason,
  onlyOffered,
  busy,
  error,
  onSubmit,
}: {
  label: string;
  submitLabel: string;
  offered: readonly string[];
  unofferedReason: string;
  onlyOffered?: boolean;
  busy: boolean;
  error: ApiError | null;
  onSubmit: (token: NewToken) => Promise<boolean>;
}) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<ScopeName[]>([]);
  const [toolsets, setToolsets] = useState('');
  const [localError, setLocalError] = useState<ApiError | null>(null);
  const submit = async () => {
    if (scopes.length === 0) return setLocalError(NO_SCOPES);
    setLocalError(null);
    const bound = toolsetList(toolsets);
    const issued = await onSubmit({ name: name.trim(), scopes, ...(bound ? { toolsets: bound } : {}) });
    if (issued) {
      setName('');
      setScopes([]);
      setToolsets('');
    }
  };
  return (
    <Form label={label} submitLabel={submitLabel} busy={busy} busyLabel="Issuing the token…" error={localError ?? error} onSubmit={() => void submit()}>
      <Field label="Token name" hint="What the token is for, e.g. grafana-reader.">
        <input name="name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} />
      </Field>
      <ScopeChecklist legend="Scopes" value={scopes} onChange={setScopes} offered={offered} unofferedReason={unofferedReason} onlyOffered={onlyOffered} />
      <Field label="Toolsets (optional)" hint="Comma-separated toolset names to bind the token to; empty: not bound.">
        <input name="toolsets" value={toolsets} onChange={(e) => setToolsets(e.target.value)} spellCheck={false} />
      </Field>
    </Form>
  );
}
