import { useState } from 'react';
import { useUrlState } from '../../app/urlState';
import { Can } from '../../auth/session';
import { isCategory } from './shared/categories';
import { KeyForm } from './shared/KeyForm';
import { TopicDetail } from './shared/TopicDetail';
import { EMPTY_DRAFT, type TopicDraft, TopicForm } from './shared/TopicForm';
import { TopicList } from './shared/TopicList';

/** The public bait API: its topics as agents see them, editing them, and agent API keys. */
export default function AgentApi() {
  const { get, set } = useUrlState();
  const open = get('topic');
  const [draft, setDraft] = useState<TopicDraft>(EMPTY_DRAFT);
  // Bumped after a save so the list and the open topic load again.
  const [saves, setSaves] = useState(0);
  return (
    <>
      <div className="page-head">
        <h1>Agent API</h1>
      </div>
      <p className="muted">Topics as agents get them from the public API; reading them here is not recorded as an agent's call.</p>
      <Can scope="read:tenants">
        {open && (
          <TopicDetail
            slug={open}
            reloadKey={saves}
            onEdit={(t) => {
              setDraft({ slug: t.slug, title: t.title, category: isCategory(t.category) ? t.category : EMPTY_DRAFT.category, summary: t.summary, body: t.body });
              document.getElementById('topic-form')?.scrollIntoView();
            }}
            onClose={() => set({ topic: null })}
          />
        )}
        <TopicList reloadKey={saves} />
      </Can>
      <div className="grid">
        <Can scope="write:tenants">
          <section className="panel" id="topic-form">
            <h2>Add or replace a topic</h2>
            <TopicForm
              draft={draft}
              onDraft={setDraft}
              onSaved={(slug) => {
                setSaves((n) => n + 1);
                setDraft(EMPTY_DRAFT);
                set({ topic: slug });
              }}
            />
          </section>
        </Can>
        <Can scope="write:tokens">
          <section className="panel">
            <h2>Agent API keys</h2>
            <p className="muted">A key raises one crawler's rate limit. Only its hash is kept.</p>
            <KeyForm />
          </section>
        </Can>
      </div>
    </>
  );
}
