import { api, unwrap } from '../../../api/client';
import { useUrlState } from '../../../app/urlState';
import { useQuery } from '../../../app/useQuery';
import { DataTable, Panel, Time } from '../../../components';
import { CATEGORIES, isCategory } from './categories';

const PAGE_SIZE = 20;

/** The bait API's topics (read with the operator's credential, so not recorded as agent calls), newest first, by category and page (both in the address); a title opens one. */
export function TopicList({ reloadKey }: { reloadKey: number }) {
  const { get, set } = useUrlState();
  const category = isCategory(get('category')) ? get('category') : '';
  const page = Math.max(1, Number.parseInt(get('page', '1'), 10) || 1);
  const topics = useQuery(
    () =>
      unwrap(
        api.GET('/api/observatory/v1/agent-api/topics', {
          params: { query: { page, limit: PAGE_SIZE, ...(isCategory(category) ? { category } : {}) } },
        }),
      ),
    [category, page, reloadKey],
  );
  return (
    <Panel
      title="Topics"
      state={topics}
      minHeight={360}
      actions={
        <label className="field inline">
          <span className="sr-only">Category</span>
          <select aria-label="Category" value={category} onChange={(e) => set({ category: e.target.value || null, page: null })}>
            <option value="">Every category</option>
            {CATEGORIES.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>
        </label>
      }
      isEmpty={(d) => d.topics.length === 0}
      empty={category ? 'No topics in this category: pick another, or add one below.' : 'The bait API has no topics yet: add one below.'}
    >
      {(d) => (
        <>
          <DataTable
            caption={`${d.total} topics, newest first`}
            rows={d.topics}
            rowKey={(t) => t.slug}
            pageSize={PAGE_SIZE}
            columns={[
              {
                key: 'title',
                label: 'Title',
                sortValue: (t) => t.title,
                render: (t) => (
                  <button type="button" className="link" onClick={() => set({ topic: t.slug })}>
                    {t.title}
                  </button>
                ),
              },
              { key: 'slug', label: 'Slug', render: (t) => <code>{t.slug}</code> },
              { key: 'category', label: 'Category', sortValue: (t) => t.category },
              { key: 'createdAt', label: 'Created', sortValue: (t) => t.createdAt, render: (t) => <Time at={t.createdAt} /> },
            ]}
          />
          <nav className="pager" aria-label="Topic pages">
            <button type="button" onClick={() => set({ page: page - 1 <= 1 ? null : String(page - 1) })} disabled={page <= 1}>
              Previous
            </button>
            <span>
              Page {d.page} of {Math.max(1, d.totalPages)}
            </span>
            <button type="button" onClick={() => d.nextPage && set({ page: String(d.nextPage) })} disabled={d.nextPage === null}>
              Next
            </button>
          </nav>
        </>
      )}
    </Panel>
  );
}
