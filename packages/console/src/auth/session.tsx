import { createContext, type ReactNode, useCallback, useContext, useEffect, useState } from 'react';
import { api, tokenStore, unwrap } from '../api/client';

export interface Account {
  userId: string;
  username: string;
  via: 'bearer' | 'session';
  scopes: string[];
}

interface SessionState {
  /** null while the first check runs; false when nobody is signed in. */
  account: Account | null | false;
  refresh: () => Promise<Account | false>;
  signInWithToken: (token: string) => Promise<Account | false>;
  signOut: () => Promise<void>;
  can: (scope: string | readonly string[] | undefined) => boolean;
}

const SessionContext = createContext<SessionState | null>(null);

async function whoAmI(): Promise<Account | false> {
  const { data, response } = await api.GET('/api/observatory/v1/account');
  if (response.status === 401 || !data) return false;
  return { userId: data.userId, username: data.username, via: data.via, scopes: data.scopes };
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [account, setAccount] = useState<Account | null | false>(null);

  const refresh = useCallback(async () => {
    const who = await whoAmI().catch(() => false as const);
    setAccount(who);
    return who;
  }, []);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  const signInWithToken = useCallback(
    async (token: string) => {
      tokenStore.set(token.trim());
      const who = await refresh();
      if (who === false) tokenStore.clear();
      return who;
    },
    [refresh],
  );

  const signOut = useCallback(async () => {
    // Ends the server-side session (a cookie sign-in) and forgets a typed token in this tab.
    await unwrap(api.POST('/api/observatory/v1/account/logout', { body: {} })).catch(() => undefined);
    tokenStore.clear();
    setAccount(false);
  }, []);

  const can = useCallback(
    (scope: string | readonly string[] | undefined) => {
      if (!account) return false;
      if (scope === undefined) return true;
      const wanted = typeof scope === 'string' ? [scope] : scope;
      return wanted.length === 0 || wanted.some((s) => account.scopes.includes(s));
    },
    [account],
  );

  return <SessionContext.Provider value={{ account, refresh, signInWithToken, signOut, can }}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside SessionProvider');
  return state;
}

/** Renders its children only when the operator holds the scope (actions hidden, not just disabled). */
export function Can({ scope, children }: { scope: string | readonly string[]; children: ReactNode }) {
  return useSession().can(scope) ? <>{children}</> : null;
}
