import { useState } from 'react';
import { api, unwrap } from '../../../api/client';
import { useAction } from '../../../app/useQuery';
import { Field, Form, Time } from '../../../components';
import { ReplayLink } from './links';
import { TenantSelect } from './TenantSelect';
import { UaClassBadge } from './uaClasses';

/** Sends one synthetic event through the real ingest path, signed with the tenant's current secret. */
export function TestEvent({ onSent }: { onSent: () => void }) {
  const [tenant, setTenant] = useState('');
  const [path, setPath] = useState('/honeypot/topics/observatory-test-event');
  const send = useAction(() => unwrap(api.POST('/api/observatory/v1/honeypot/test-event', { body: { tenant, path } })));
  const [sent, setSent] = useState<Awaited<ReturnType<typeof send.execute>>>(null);
  return (
    <>
      <Form
        label="Send a test event"
        submitLabel="Send test event"
        busy={send.busy}
        busyLabel="Sending…"
        error={send.error}
        onSubmit={() =>
          void send.execute().then((answer) => {
            setSent(answer);
            if (answer) onSent();
          })
        }
      >
        <div className="hp-form-row">
          <TenantSelect label="Tenant" enabledOnly value={tenant} onChange={setTenant} />
          <Field label="Path">
            <input value={path} onChange={(e) => setPath(e.target.value)} required maxLength={2048} />
          </Field>
        </div>
      </Form>
      {sent && (
        <p role="status">
          Accepted at <Time at={sent.acceptedAt} /> for {sent.tenant} as <UaClassBadge value={sent.uaClass} />: event <ReplayLink eventId={sent.eventId}>{sent.eventId}</ReplayLink>.
        </p>
      )}
    </>
  );
}
