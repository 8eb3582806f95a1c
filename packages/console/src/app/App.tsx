import { lazy, useMemo } from 'react';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { SessionProvider, useSession } from '../auth/session';
import { SignIn } from '../auth/SignIn';
import { Busy } from '../components/Busy';
import { PAGES } from '../pages';
import { Layout } from './Layout';

function NotFound() {
  return (
    <section className="panel">
      <h1>No such page</h1>
      <p>This address is not a console page. Pick one from the navigation.</p>
    </section>
  );
}

function Forbidden({ title }: { title: string }) {
  return (
    <section className="panel">
      <h1>{title}</h1>
      <p>Your credential does not carry a scope this page needs. Ask an operator with write:tokens for a token that has it.</p>
    </section>
  );
}

function Routed() {
  const { account, can } = useSession();
  const routes = useMemo(() => PAGES.map((p) => ({ ...p, Component: lazy(p.load) })), []);
  if (account === null) return <Busy label="Checking your sign-in…" />;
  if (account === false) return <SignIn />;
  return (
    <Layout pages={PAGES}>
      <Routes>
        <Route path="/" element={<Navigate to="/honeypot" replace />} />
        <Route path="/login" element={<Navigate to="/honeypot" replace />} />
        {routes.map(({ path, title, anyScope, Component }) => (
          <Route key={path} path={path} element={can(anyScope) ? <Component /> : <Forbidden title={title} />} />
        ))}
        <Route path="*" element={<NotFound />} />
      </Routes>
    </Layout>
  );
}

export function App() {
  return (
    <BrowserRouter basename="/console">
      <SessionProvider>
        <Routed />
      </SessionProvider>
    </BrowserRouter>
  );
}
