import { useState } from 'react';
import { Busy } from '../../../components';
import './settings.css';

/**
 * A destructive action behind a second, explicit click: the first shows what will happen and a
 * confirm and a cancel button, so nothing is revoked by a stray click or keypress.
 */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  busy,
  onConfirm,
}: {
  label: string;
  question: string;
  confirmLabel: string;
  busy: boolean;
  onConfirm: () => void;
}) {
  const [asking, setAsking] = useState(false);
  if (busy) return <Busy label="Working…" />;
  if (!asking)
    return (
      <button type="button" className="danger" onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <span className="confirm" role="group" aria-label={question}>
      <span>{question}</span>{' '}
      <button
        type="button"
        className="danger"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)} autoFocus>
        Cancel
      </button>
    </span>
  );
}
