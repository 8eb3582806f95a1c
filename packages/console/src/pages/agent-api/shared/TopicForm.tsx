import { useCallback, useState } from 'react';
import { api, unwrap } from '../../../api/client';
import { useAction } from '../../../app/useQuery';
import { Field, Form } from '../../../components';
import type { BodyOf } from '../../settings/shared/api-types';
import { CATEGORIES, type Category } from './categories';

type NewTopic = BodyOf<'upsertAgentTopics'>['topics'][number];
export interface TopicDraft {
  slug: string;
  title: string;
  category: Category;
  summary: string;
  body: string;
}

export const EMPTY_DRAFT: TopicDraft = { slug: '', title: '', category: 'tech', summary: '', body: '' };

/**
 * Adds a topic, or replaces the one with the same slug (the service upserts by slug). Changes
 * go live on the bait API at once.
 */
export function TopicForm({ draft, onDraft, onSaved }: { draft: TopicDraft; onDraft: (next: TopicDraft) => void; onSaved: (slug: string) => void }) {
  const [saved, setSaved] = useState<string | null>(null);
  const upsert = useAction(useCallback((topic: NewTopic) => unwrap(api.POST('/api/observatory/v1/agent-api/topics', { body: { topics: [topic] } })), []));
  const field = (name: keyof TopicDraft) => (e: { target: { value: string } }) => onDraft({ ...draft, [name]: e.target.value });
  const submit = async () => {
    setSaved(null);
    const topic: NewTopic = { slug: draft.slug.trim(), title: draft.title.trim(), category: draft.category, summary: draft.summary.trim(), body: draft.body };
    const answer = await upsert.execute(topic);
    if (!answer) return;
    setSaved(answer.inserted > 0 ? `Topic “${topic.slug}” added.` : `Topic “${topic.slug}” replaced.`);
    onSaved(topic.slug);
  };
  return (
    <>
      <Form label="Add or replace a topic" submitLabel="Save topic" busy={upsert.busy} busyLabel="Saving the topic…" error={upsert.error} onSubmit={() => void submit()}>
        <Field label="Slug" hint="Lower-case letters, digits and -; an existing slug is replaced.">
          <input name="slug" value={draft.slug} onChange={field('slug')} required pattern="[a-z0-9][a-z0-9\-]{0,127}" spellCheck={false} />
        </Field>
        <Field label="Title">
          <input name="title" value={draft.title} onChange={field('title')} required maxLength={300} />
        </Field>
        <Field label="Category">
          <select name="category" value={draft.category} onChange={field('category')}>
            {CATEGORIES.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Summary">
          <textarea name="summary" rows={2} value={draft.summary} onChange={field('summary')} required maxLength={1000} />
        </Field>
        <Field label="Body">
          <textarea name="body" rows={8} value={draft.body} onChange={field('body')} required maxLength={50_000} />
        </Field>
      </Form>
      {saved && (
        <p role="status" className="badge ok">
          {saved}
        </p>
      )}
    </>
  );
}
