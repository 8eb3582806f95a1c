import { type ReactNode, Suspense } from 'react';
import { NavLink, useLocation } from 'react-router';
import { useSession } from '../auth/session';
import { Busy } from '../components/Busy';
import type { PageDef } from './pages';
import { PageErrorBoundary } from './PageErrorBoundary';

function sections(pages: readonly PageDef[]): [string, PageDef[]][] {
  const grouped = new Map<string, PageDef[]>();
  for (const page of pages) {
    if (page.hidden) continue;
    grouped.set(page.section, [...(grouped.get(page.section) ?? []), page]);
  }
  return [...grouped.entries()];
}

/** The frame: header, the navigation the operator's scopes allow, and the page. */
export function Layout({ pages, children }: { pages: readonly PageDef[]; children: ReactNode }) {
  const { account, signOut, can } = useSession();
  const location = useLocation();
  const visible = pages.filter((p) => can(p.anyScope));
  const nav = (
    <nav aria-label="Console">
      {sections(visible).map(([section, items]) => (
        <div key={section} className="nav-section">
          <h3>{section}</h3>
          <ul>
            {items.map((p) => (
              <li key={p.path}>
                <NavLink to={p.path} end>
                  {p.title}
                </NavLink>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </nav>
  );
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Observatory</span>
        {/* In a narrow window the navigation folds into this menu. */}
        <details className="nav-menu" key={location.pathname}>
          <summary>Menu</summary>
          {nav}
        </details>
        <span className="who">
          {account ? (
            <>
              <span>
                {account.username} <span className="muted">({account.via === 'session' ? 'passkey' : 'token'})</span>
              </span>
              <button type="button" onClick={() => void signOut()}>
                Sign out
              </button>
            </>
          ) : null}
        </span>
      </header>
      <div className="body">
        <aside className="sidebar">{nav}</aside>
        <main id="main" tabIndex={-1}>
          <PageErrorBoundary resetKey={location.pathname}>
            <Suspense fallback={<Busy label="Loading page…" />}>{children}</Suspense>
          </PageErrorBoundary>
        </main>
      </div>
    </div>
  );
}
