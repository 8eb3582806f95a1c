import { useState } from 'react';
import { useAction } from '../../../app/useQuery';
import { Field, Form } from '../../../components';
import { type Subprocessor, SUBPROCESSOR_ROLES, type SubprocessorRole, upsertSubprocessor } from './api';

/**
 * Registers a subprocessor or changes the one of that name (names compare ignoring case); starts
 * from `from` when an operator chose to edit a row. Links left empty are cleared.
 */
export function SubprocessorForm({ from, onSaved }: { from: Subprocessor | null; onSaved: (row: Subprocessor) => void }) {
  const [name, setName] = useState(from?.name ?? '');
  const [role, setRole] = useState<SubprocessorRole>(from?.role ?? 'infra');
  const [dataAccess, setDataAccess] = useState(from?.dataAccess ?? '');
  const [region, setRegion] = useState(from?.region ?? '');
  const [notes, setNotes] = useState(from?.notes ?? '');
  const [websiteUrl, setWebsiteUrl] = useState(from?.websiteUrl ?? '');
  const [contractUrl, setContractUrl] = useState(from?.contractUrl ?? '');
  const [markReviewed, setMarkReviewed] = useState(false);
  const action = useAction(upsertSubprocessor);

  const submit = async () => {
    const answer = await action.execute({
      name: name.trim(),
      role,
      dataAccess: dataAccess.trim(),
      region: region.trim(),
      notes: notes.trim(),
      websiteUrl: websiteUrl.trim() || null,
      contractUrl: contractUrl.trim() || null,
      markReviewed,
    });
    if (answer) onSaved(answer.row);
  };

  const title = from ? `Change ${from.name}` : 'Register a subprocessor';
  return (
    <section className="panel">
      <h2>{title}</h2>
      <Form label="Register or change a subprocessor" onSubmit={() => void submit()} busy={action.busy} error={action.error} submitLabel="Save the subprocessor">
        <Field label="Name" hint="A subprocessor of the same name (ignoring case) is changed, not added; an archived one comes back into use.">
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
        </Field>
        <Field label="Role">
          <select value={role} onChange={(e) => setRole(e.target.value as SubprocessorRole)}>
            {SUBPROCESSOR_ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Data it can reach">
          <input value={dataAccess} onChange={(e) => setDataAccess(e.target.value)} maxLength={2000} />
        </Field>
        <Field label="Region" hint="Where it processes the data.">
          <input value={region} onChange={(e) => setRegion(e.target.value)} maxLength={200} />
        </Field>
        <Field label="Notes">
          <textarea value={notes} onChange={(e) => setNotes(e.target.value)} maxLength={4000} rows={2} />
        </Field>
        <Field label="Website URL">
          <input type="url" value={websiteUrl} onChange={(e) => setWebsiteUrl(e.target.value)} maxLength={2048} />
        </Field>
        <Field label="Contract or DPA URL">
          <input type="url" value={contractUrl} onChange={(e) => setContractUrl(e.target.value)} maxLength={2048} />
        </Field>
        <label className="check">
          <input type="checkbox" checked={markReviewed} onChange={(e) => setMarkReviewed(e.target.checked)} /> Record a review by me now
        </label>
      </Form>
    </section>
  );
}
