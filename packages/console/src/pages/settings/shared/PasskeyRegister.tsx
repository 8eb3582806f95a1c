import { browserSupportsWebAuthn, startRegistration } from '@simplewebauthn/browser';
import { useState } from 'react';
import { api, ApiFailure, type ApiError, unwrap } from '../../../api/client';
import { Field, Form } from '../../../components';

/** The authenticator's refusal (cancelled, timed out, already registered) in words. */
function ceremonyError(cause: unknown): ApiError {
  if (cause instanceof ApiFailure) return cause.detail;
  const name = cause instanceof Error ? cause.name : '';
  const human =
    name === 'NotAllowedError'
      ? 'The passkey prompt was cancelled or timed out. Try again and confirm on your authenticator.'
      : name === 'InvalidStateError'
        ? 'This authenticator already holds a passkey for your account.'
        : `The passkey could not be created: ${cause instanceof Error ? cause.message : String(cause)}`;
  return { status: 0, reason: 'passkey', human };
}

/**
 * Registers a passkey with the service's two ceremonies: start (a challenge and options), the
 * browser's authenticator prompt, then finish (the attestation checked and stored).
 */
export function PasskeyRegister({ onRegistered }: { onRegistered: (label: string) => void }) {
  const [label, setLabel] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const supported = browserSupportsWebAuthn();

  const register = async () => {
    setBusy(true);
    setError(null);
    try {
      const deviceLabel = label.trim() || undefined;
      const start = await unwrap(api.POST('/api/observatory/v1/account/passkeys/register/start', { body: deviceLabel ? { deviceLabel } : {} }));
      const response = await startRegistration({ optionsJSON: start.options as never });
      const finished = await unwrap(
        api.POST('/api/observatory/v1/account/passkeys/register/finish', {
          body: { challengeId: start.challengeId, response: response as never, ...(deviceLabel ? { deviceLabel } : {}) },
        }),
      );
      setLabel('');
      onRegistered(finished.passkey.deviceLabel);
    } catch (cause) {
      setError(ceremonyError(cause));
    } finally {
      setBusy(false);
    }
  };

  if (!supported) return <p className="empty">This browser cannot use passkeys (WebAuthn is unavailable). Open the console in a current browser over HTTPS or on localhost.</p>;
  return (
    <Form label="Register a passkey" submitLabel="Register a passkey" busy={busy} busyLabel="Waiting for your authenticator…" error={error} onSubmit={() => void register()}>
      <Field label="Device label (optional)" hint="A name to recognise the authenticator by, e.g. “Work laptop (Touch ID)”.">
        <input name="deviceLabel" value={label} onChange={(e) => setLabel(e.target.value)} maxLength={100} />
      </Field>
    </Form>
  );
}
