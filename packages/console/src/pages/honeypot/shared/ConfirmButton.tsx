import { useState } from 'react';
import { Busy } from '../../../components';

/**
 * A button for an action that cannot be taken back: the first press asks, in the page (keyboard
 * reachable, no browser dialog), and only "Confirm" runs it.
 */
export function ConfirmButton({
  label,
  question,
  confirmLabel = 'Confirm',
  onConfirm,
  busy = false,
  danger = false,
}: {
  label: string;
  question: string;
  confirmLabel?: string;
  onConfirm: () => void;
  busy?: boolean;
  danger?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (busy) return <Busy label={`${label}…`} />;
  if (!asking) {
    return (
      <button type="button" className={danger ? 'danger' : undefined} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span className="hp-confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        type="button"
        className={danger ? 'danger' : 'primary'}
        autoFocus
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
