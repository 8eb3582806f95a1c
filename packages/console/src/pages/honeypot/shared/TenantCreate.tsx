import { useState } from 'react';
import { api, unwrap } from '../../../api/client';
import { useAction } from '../../../app/useQuery';
import { Field, Form } from '../../../components';

export interface NewSecret {
  title: string;
  secret: string;
  previousValidUntil?: string;
}

/** Creates a tenant; its signing secret comes back once and goes to the caller to show. */
export function TenantCreate({ onCreated }: { onCreated: (secret: NewSecret) => void }) {
  const [slug, setSlug] = useState('');
  const [name, setName] = useState('');
  const [notes, setNotes] = useState('');
  const create = useAction(() =>
    unwrap(api.POST('/api/observatory/v1/honeypot/tenants', { body: { slug: slug.trim(), name: name.trim(), notes: notes.trim() || null } })),
  );
  return (
    <Form
      label="Create a tenant"
      submitLabel="Create tenant"
      busy={create.busy}
      busyLabel="Creating…"
      error={create.error}
      onSubmit={() =>
        void create.execute().then((answer) => {
          if (!answer) return;
          onCreated({ title: `Signing secret of ${answer.tenant.slug}`, secret: answer.signingSecret });
          setSlug('');
          setName('');
          setNotes('');
        })
      }
    >
      <div className="hp-form-row">
        <Field label="Slug" hint="1 to 64 of a-z, 0-9 and -; the honeypot sends it as X-Observatory-Tenant.">
          <input value={slug} onChange={(e) => setSlug(e.target.value)} required pattern="[a-z0-9\-]{1,64}" maxLength={64} autoComplete="off" spellCheck={false} />
        </Field>
        <Field label="Name">
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
        </Field>
      </div>
      <Field label="Notes" hint="Optional: where it runs, who looks after it.">
        <textarea value={notes} onChange={(e) => setNotes(e.target.value)} maxLength={2000} rows={2} />
      </Field>
    </Form>
  );
}
