import { useState } from 'react';
import { useAction } from '../../../app/useQuery';
import { Field, Form } from '../../../components';
import { type Drill, resolveDrill } from './api';

/** Resolves an error drill with a note (what was found and done), which lifts the 24-hour refusal. */
export function ResolveDrill({ drill, onResolved }: { drill: Drill; onResolved: () => void }) {
  const [note, setNote] = useState('');
  const action = useAction(resolveDrill);
  return (
    <Form
      label={`Resolve drill ${drill.id}`}
      onSubmit={() => void action.execute(drill.id, note.trim()).then((answer) => answer && onResolved())}
      busy={action.busy}
      error={action.error}
      submitLabel="Resolve"
    >
      <Field label="What was found and done">
        <input value={note} onChange={(e) => setNote(e.target.value)} required maxLength={2000} />
      </Field>
    </Form>
  );
}
