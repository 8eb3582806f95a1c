import { startAuthentication } from '@simplewebauthn/browser';
import { useState } from 'react';
import { api, ApiFailure, type ApiError, unwrap } from '../api/client';
import { Busy } from '../components/Busy';
import { ErrorNote } from '../components/ErrorNote';
import { Field } from '../components/Form';
import { useSession } from './session';

/**
 * Sign-in: a passkey (the service's WebAuthn ceremonies; the session cookie it sets), or an API
 * token, which is how the first start signs in before anyone has registered a passkey.
 */
export function SignIn() {
  const { signInWithToken, refresh } = useSession();
  const [token, setToken] = useState('');
  const [username, setUsername] = useState('');
  const [busy, setBusy] = useState<null | 'token' | 'passkey'>(null);
  const [error, setError] = useState<ApiError | null>(null);

  const withToken = async () => {
    setBusy('token');
    setError(null);
    const who = await signInWithToken(token);
    setBusy(null);
    if (who === false) setError({ status: 401, reason: 'unauthorized', human: 'That token was not accepted: it is unknown, revoked or expired.' });
  };

  const withPasskey = async () => {
    setBusy('passkey');
    setError(null);
    try {
      const start = await unwrap(api.POST('/api/observatory/v1/account/login/start', { body: username ? { username } : {} }));
      const response = await startAuthentication({ optionsJSON: start.options as never });
      await unwrap(api.POST('/api/observatory/v1/account/login/finish', { body: { challengeId: start.challengeId, response: response as never } }));
      await refresh();
    } catch (cause) {
      setError(
        cause instanceof ApiFailure
          ? cause.detail
          : { status: 0, reason: 'passkey', human: `The passkey sign-in did not finish: ${cause instanceof Error ? cause.message : String(cause)}` },
      );
    } finally {
      setBusy(null);
    }
  };

  return (
    <main id="main" className="signin">
      <h1>Observatory</h1>
      <section className="panel">
        <h2>Sign in with a passkey</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void withPasskey();
          }}
        >
          <Field label="Username (optional)" hint="Leave empty to pick from the passkeys this browser knows.">
            <input name="username" autoComplete="username webauthn" value={username} onChange={(e) => setUsername(e.target.value)} />
          </Field>
          <button type="submit" className="primary" disabled={busy !== null}>
            Sign in with a passkey
          </button>
          {busy === 'passkey' && <Busy label="Waiting for the passkey…" />}
        </form>
      </section>
      <section className="panel">
        <h2>Sign in with an API token</h2>
        <p className="muted">
          On the first start the service prints an admin token (or reads OBSERVATORY_ADMIN_TOKEN). It is kept in this tab only and forgotten when the tab
          closes; register a passkey under Settings → Account to sign in without it.
        </p>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void withToken();
          }}
        >
          <Field label="API token">
            <input name="token" type="password" autoComplete="off" spellCheck={false} value={token} onChange={(e) => setToken(e.target.value)} required />
          </Field>
          <button type="submit" className="primary" disabled={busy !== null || token.trim() === ''}>
            Sign in with the token
          </button>
          {busy === 'token' && <Busy label="Checking the token…" />}
        </form>
      </section>
      {error && <ErrorNote error={error} />}
    </main>
  );
}
