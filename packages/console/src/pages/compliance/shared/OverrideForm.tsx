import { useState } from 'react';
import { useAction } from '../../../app/useQuery';
import { Field, Form } from '../../../components';
import { type Control, type Outcome, OUTCOMES, overrideControl } from './api';

/** Parses the optional evidence box: empty is none, else JSON or a message saying why not. */
export function parseObserved(text: string): { value?: unknown; error?: string } {
  if (text.trim() === '') return {};
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (cause) {
    return { error: `The evidence is not JSON: ${cause instanceof Error ? cause.message : String(cause)}` };
  }
}

/** Sets a control's outcome by hand, with why and optional evidence; it holds until an automatic evaluation disagrees. */
export function OverrideForm({ control, framework, onSaved }: { control: Control; framework: string; onSaved: (evaluationId: string) => void }) {
  const [outcome, setOutcome] = useState<Outcome>(control.latestOutcome === 'pass' ? 'fail' : 'pass');
  const [note, setNote] = useState('');
  const [observed, setObserved] = useState('');
  const [localError, setLocalError] = useState<string | null>(null);
  const action = useAction(overrideControl);

  const submit = async () => {
    const parsed = parseObserved(observed);
    if (parsed.error) return setLocalError(parsed.error);
    setLocalError(null);
    const answer = await action.execute({
      controlId: control.controlId,
      framework,
      outcome,
      note: note.trim(),
      ...('value' in parsed ? { observed: parsed.value } : {}),
    });
    if (answer) {
      setNote('');
      setObserved('');
      onSaved(answer.evaluationId);
    }
  };

  return (
    <section className="panel">
      <h2>Override {control.controlId}</h2>
      <p className="muted">
        The outcome you set is in force until an automatic evaluation gives the control an outcome other than the one it overrode, or another override
        replaces it. It is audited and chained.
      </p>
      <Form label={`Override ${control.controlId}`} onSubmit={() => void submit()} busy={action.busy} error={action.error} submitLabel="Override the outcome">
        <Field label="Outcome">
          <select value={outcome} onChange={(e) => setOutcome(e.target.value as Outcome)}>
            {OUTCOMES.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Note" hint="Why: shown as the control's summary while the override holds.">
          <textarea value={note} onChange={(e) => setNote(e.target.value)} required maxLength={2000} rows={3} />
        </Field>
        <Field label="Evidence (optional JSON)" hint="What you relied on, kept with the override (at most 16 KiB).">
          <textarea value={observed} onChange={(e) => setObserved(e.target.value)} rows={4} spellCheck={false} />
        </Field>
        {localError && (
          <p className="error-note" role="alert">
            {localError}
          </p>
        )}
      </Form>
    </section>
  );
}
