import { useCallback, useState } from 'react';
import { api, unwrap } from '../../../api/client';
import { useAction } from '../../../app/useQuery';
import { Field, Form } from '../../../components';
import type { Answer } from '../../settings/shared/api-types';
import { ShownOnce } from '../../settings/shared/ShownOnce';

/** Issues an agent API key (a higher rate limit for one crawler); the key is shown once. */
export function KeyForm() {
  const [name, setName] = useState('');
  const [plan, setPlan] = useState('');
  const [issued, setIssued] = useState<Answer<'createAgentApiKey'> | null>(null);
  const create = useAction(
    useCallback((keyName: string, keyPlan: string) => unwrap(api.POST('/api/observatory/v1/agent-api/keys', { body: { name: keyName, ...(keyPlan ? { plan: keyPlan } : {}) } })), []),
  );
  const submit = async () => {
    const answer = await create.execute(name.trim(), plan.trim());
    if (!answer) return;
    setIssued(answer);
    setName('');
    setPlan('');
  };
  return (
    <>
      {issued && (
        <ShownOnce
          title={`Agent API key for “${issued.name}” (${issued.plan})`}
          value={issued.key}
          note="The agent sends it as Authorization: Bearer <key> or X-API-Key."
          onDismiss={() => setIssued(null)}
        />
      )}
      <Form label="Create an agent API key" submitLabel="Create key" busy={create.busy} busyLabel="Creating the key…" error={create.error} onSubmit={() => void submit()}>
        <Field label="Key name" hint="Who the key is for, e.g. the crawler's name.">
          <input name="keyName" value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
        </Field>
        <Field label="Plan (optional)" hint="A label; default “paid”. Every plan gets the key rate limit.">
          <input name="plan" value={plan} onChange={(e) => setPlan(e.target.value)} pattern="[a-z0-9][a-z0-9\-]{0,31}" spellCheck={false} />
        </Field>
      </Form>
    </>
  );
}
