import { useState } from 'react';
import type { ApiError } from '../../../api/client';
import { Field, Form } from '../../../components';
import type { BodyOf } from './api-types';
import { ScopeChecklist } from './ScopeChecklist';
import type { ScopeName } from './scopes';

export type NewOperator = BodyOf<'createOperator'>;

const NO_SCOPES: ApiError = { status: 400, reason: 'no-scopes', human: 'Pick at least one scope for the operator.' };

/** A new operator: username, display name and the scopes they hold (their first token carries the same). */
export function OperatorForm({
  offered,
  busy,
  error,
  onSubmit,
}: {
  offered: readonly string[];
  busy: boolean;
  error: ApiError | null;
  onSubmit: (operator: NewOperator) => Promise<boolean>;
}) {
  const [username, setUsername] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [scopes, setScopes] = useState<ScopeName[]>([]);
  const [localError, setLocalError] = useState<ApiError | null>(null);
  const submit = async () => {
    if (scopes.length === 0) return setLocalError(NO_SCOPES);
    setLocalError(null);
    const added = await onSubmit({ username: username.trim(), scopes, ...(displayName.trim() ? { displayName: displayName.trim() } : {}) });
    if (added) {
      setUsername('');
      setDisplayName('');
      setScopes([]);
    }
  };
  return (
    <Form label="Add an operator" submitLabel="Add operator" busy={busy} busyLabel="Adding the operator…" error={localError ?? error} onSubmit={() => void submit()}>
      <Field label="Username" hint="2 to 64 of a-z, 0-9, “.”, “_” or “-”, starting with a letter.">
        <input name="username" value={username} onChange={(e) => setUsername(e.target.value)} required pattern="[a-z][a-z0-9._\-]{1,63}" autoComplete="off" />
      </Field>
      <Field label="Display name (optional)">
        <input name="displayName" value={displayName} onChange={(e) => setDisplayName(e.target.value)} maxLength={200} />
      </Field>
      <ScopeChecklist legend="Scopes the operator holds" value={scopes} onChange={setScopes} offered={offered} unofferedReason="your credential lacks it" />
    </Form>
  );
}
