import { useEffect, useRef, useState } from 'react';
import { Time } from '../../../components';

/**
 * A signing secret the service shows once: copy it now, it is never shown again. Kept only in
 * this page's memory; dismissing it forgets it.
 */
export function SecretOnce({
  title,
  secret,
  note,
  previousValidUntil,
  onDismiss,
}: {
  title: string;
  secret: string;
  note?: string;
  previousValidUntil?: string;
  onDismiss: () => void;
}) {
  const [copied, setCopied] = useState(false);
  const box = useRef<HTMLElement>(null);
  // The form that asked may be far down the page: bring the secret into view and focus.
  useEffect(() => {
    box.current?.scrollIntoView({ block: 'nearest' });
    box.current?.focus();
  }, [secret]);
  return (
    <section className="panel hp-secret-once" role="status" aria-label={title} ref={box} tabIndex={-1}>
      <h2>{title}</h2>
      <p>
        <strong>Shown once.</strong> Copy it into the honeypot's configuration now: the service keeps no readable copy and will not show it again.
        {note ? ` ${note}` : ''}
      </p>
      <p className="hp-secret-value">
        <code aria-label="Signing secret">{secret}</code>
      </p>
      {previousValidUntil && (
        <p className="muted">
          The previous secret keeps verifying until <Time at={previousValidUntil} />, so honeypots can switch without losing events.
        </p>
      )}
      <div className="form-actions">
        <button
          type="button"
          onClick={() => {
            void navigator.clipboard?.writeText(secret).then(
              () => setCopied(true),
              () => setCopied(false),
            );
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDismiss}>
          I have saved it
        </button>
      </div>
    </section>
  );
}
