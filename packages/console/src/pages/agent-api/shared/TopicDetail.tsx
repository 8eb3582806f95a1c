import { api, unwrap } from '../../../api/client';
import { useQuery } from '../../../app/useQuery';
import { Can } from '../../../auth/session';
import { Panel, Time } from '../../../components';

export type TopicFull = Awaited<ReturnType<typeof loadTopic>>['topic'];

const loadTopic = (slug: string) => unwrap(api.GET('/api/observatory/v1/agent-api/topics/{slug}', { params: { path: { slug } } }));

/** One topic as agents get it, with its body; "Edit" copies it into the form. */
export function TopicDetail({ slug, reloadKey, onEdit, onClose }: { slug: string; reloadKey: number; onEdit: (topic: TopicFull) => void; onClose: () => void }) {
  const topic = useQuery(() => loadTopic(slug), [slug, reloadKey]);
  return (
    <Panel
      title={topic.data ? topic.data.topic.title : `Topic ${slug}`}
      state={topic}
      minHeight={200}
      actions={
        <>
          {topic.data && (
            <Can scope="write:tenants">
              <button type="button" onClick={() => topic.data && onEdit(topic.data.topic)}>
                Edit in the form
              </button>
            </Can>
          )}
          <button type="button" onClick={onClose}>
            Close
          </button>
        </>
      }
    >
      {({ topic: t }) => (
        <>
          <dl className="facts">
            <dt>Slug</dt>
            <dd>
              <code>{t.slug}</code>
            </dd>
            <dt>Category</dt>
            <dd>{t.category}</dd>
            <dt>Bait page</dt>
            <dd>
              <a href={t.url}>{t.url}</a>
            </dd>
            <dt>Created</dt>
            <dd>
              <Time at={t.createdAt} />
            </dd>
            <dt>Updated</dt>
            <dd>
              <Time at={t.updatedAt} />
            </dd>
            <dt>Summary</dt>
            <dd>{t.summary}</dd>
          </dl>
          <h3>Body</h3>
          <p style={{ whiteSpace: 'pre-wrap' }}>{t.body}</p>
        </>
      )}
    </Panel>
  );
}
