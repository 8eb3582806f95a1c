import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { FilterSelect, Panel, Time } from '../../components';
import { EventsTable } from './shared/EventsTable';
import { TenantPicker } from './shared/TenantPicker';
import { UA_CLASSES } from './shared/uaClasses';
import './shared/honeypot.css';

const REFRESH_MS = 10_000;
const LIMITS = ['25', '50', '100'];

/**
 * The newest events, refreshing every 10 s. Tenant and count are asked of the service; class and
 * text filter the answer in the page. Every filter is in the address.
 */
export default function Recent() {
  const { get, set } = useUrlState();
  const tenant = get('tenant');
  const uaClass = get('class');
  const text = get('q');
  const limit = LIMITS.includes(get('limit')) ? Number(get('limit')) : 50;
  const paused = get('paused') === '1';
  const [updatedAt, setUpdatedAt] = useState<string | null>(null);
  // The text filter applies as it is typed and goes into the address when the field is left.
  const [draft, setDraft] = useState(text);
  const state = useQuery(
    async () => {
      const answer = await unwrap(api.GET('/api/observatory/v1/honeypot/recent', { params: { query: { limit, ...(tenant ? { tenant } : {}) } } }));
      setUpdatedAt(new Date().toISOString());
      return answer;
    },
    [tenant, limit],
    { refreshMs: paused ? undefined : REFRESH_MS },
  );
  const needle = draft.trim().toLowerCase();
  return (
    <>
      <div className="page-head">
        <h1>Recent events</h1>
        <div className="toolbar">
          <TenantPicker />
          <FilterSelect label="Verdict class" value={uaClass} options={UA_CLASSES} anyLabel="Every class" onChange={(value) => set({ class: value || null })} />
          <label className="field inline">
            <span className="sr-only">Path or user agent contains</span>
            <input
              type="search"
              aria-label="Path or user agent contains"
              placeholder="Path or user agent…"
              value={draft}
              onChange={(e) => setDraft(e.target.value)}
              onBlur={() => draft !== text && set({ q: draft.trim() || null })}
              onKeyDown={(e) => e.key === 'Enter' && set({ q: draft.trim() || null })}
            />
          </label>
          <label className="field inline">
            <span className="sr-only">Events to load</span>
            <select aria-label="Events to load" value={String(limit)} onChange={(e) => set({ limit: e.target.value === '50' ? null : e.target.value })}>
              {LIMITS.map((l) => (
                <option key={l} value={l}>
                  newest {l}
                </option>
              ))}
            </select>
          </label>
        </div>
      </div>
      <p className="hp-live muted">
        <span>
          {paused ? 'Refresh paused.' : `Refreshes every ${REFRESH_MS / 1000} s.`}
          {updatedAt && (
            <>
              {' '}
              Updated <Time at={updatedAt} />.
            </>
          )}
        </span>
        <button type="button" onClick={() => set({ paused: paused ? null : '1' })}>
          {paused ? 'Resume refresh' : 'Pause refresh'}
        </button>
      </p>
      <Panel
        state={state}
        minHeight={420}
        isEmpty={(d) => d.events.length === 0}
        empty="No events yet. Send one from a honeypot, or use “Send a test event” on the Honeypot ops page."
      >
        {(d) => {
          const rows = d.events.filter(
            (e) =>
              (!uaClass || e.uaClass === uaClass) &&
              (!needle || e.path.toLowerCase().includes(needle) || e.uaRaw.toLowerCase().includes(needle) || (e.query ?? '').toLowerCase().includes(needle)),
          );
          return (
            <>
              <p className="muted">
                {rows.length === d.events.length ? `${rows.length} newest events` : `${rows.length} of the ${d.events.length} newest events match the filters`}
                {d.tenant ? ` of ${d.tenant}` : ' of every tenant'}.
              </p>
              <EventsTable events={rows} empty="None of the loaded events match these filters: clear the class or text filter, or load more events." />
            </>
          );
        }}
      </Panel>
    </>
  );
}
