import { useState } from 'react';
import './settings.css';

/**
 * A secret the service returns once (a token's or key's plaintext): shown here with the warning
 * that it cannot be seen again, a copy button, and a way to put it away.
 */
export function ShownOnce({ title, value, note, onDismiss }: { title: string; value: string; note?: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const copy = () =>
    navigator.clipboard.writeText(value).then(
      () => setCopied('yes'),
      () => setCopied('failed'),
    );
  return (
    <section className="panel shown-once" role="region" aria-label={title}>
      <h2>{title}</h2>
      <p>
        <strong>Shown once.</strong> Copy it now: the service keeps only its hash and cannot show it again. {note}
      </p>
      <pre className="secret" aria-label="Secret value">
        {value}
      </pre>
      <div className="form-actions">
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" onClick={onDismiss}>
          I have stored it
        </button>
        <span role="status" className="muted">
          {copied === 'yes' ? 'Copied.' : copied === 'failed' ? 'The browser refused the clipboard: select the text and copy it.' : ''}
        </span>
      </div>
    </section>
  );
}
