import type { FormEvent, ReactNode } from 'react';
import type { ApiError } from '../api/client';
import { Busy } from './Busy';
import { ErrorNote } from './ErrorNote';

/** A labelled control: the label names the input for screen readers and clicks. */
export function Field({ label, hint, children }: { label: string; hint?: string; children: ReactNode }) {
  return (
    <label className="field">
      <span className="field-label">{label}</span>
      {children}
      {hint && <span className="field-hint muted">{hint}</span>}
    </label>
  );
}

/** A form that shows its progress and the service's answer when it fails. */
export function Form({
  onSubmit,
  busy,
  error,
  submitLabel,
  busyLabel = 'Saving…',
  children,
  label,
}: {
  onSubmit: () => void;
  busy: boolean;
  error: ApiError | null;
  submitLabel: string;
  busyLabel?: string;
  children: ReactNode;
  label: string;
}) {
  return (
    <form
      className="form"
      aria-label={label}
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        if (!busy) onSubmit();
      }}
    >
      {children}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={busy}>
          {submitLabel}
        </button>
        {busy && <Busy label={busyLabel} />}
      </div>
      {error && <ErrorNote error={error} />}
    </form>
  );
}
