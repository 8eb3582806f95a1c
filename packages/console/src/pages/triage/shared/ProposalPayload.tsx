import type { Draft, Proposal } from './api';
import { DraftView } from './DraftView';
import { duration } from './labels';

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : []);
const isDraft = (v: unknown): v is Draft => typeof v === 'object' && v !== null && 'title' in v && 'sections' in v;

/** What the agent proposed, read by kind: an incident with its draft postmortem, a view's filters, a rule with its backtest. */
export function ProposalPayload({ proposal: p }: { proposal: Proposal }) {
  const payload = p.payload;
  if (!payload) return <p className="error-note">The agent's output failed the schema, so there is nothing to show; see the run's replay.</p>;
  if (p.kind === 'incident') {
    return (
      <section>
        <h2>Proposed incident</h2>
        <dl className="facts">
          <dt>Severity</dt>
          <dd>{str(payload.severity) ?? '—'}</dd>
          <dt>Signal</dt>
          <dd>{str(payload.signal) ?? '—'}</dd>
          <dt>Summary</dt>
          <dd>{str(payload.summary) ?? '—'}</dd>
        </dl>
        {isDraft(payload.postmortemDraft) && (
          <details>
            <summary>Draft postmortem (seeds the incident's postmortem when accepted)</summary>
            <DraftView draft={payload.postmortemDraft} />
          </details>
        )}
      </section>
    );
  }
  if (p.kind === 'investigation') {
    const filters = (payload.filters ?? {}) as Record<string, unknown>;
    return (
      <section>
        <h2>Proposed investigation: {str(payload.name) ?? p.title}</h2>
        <ul>
          {strings(payload.rationale).map((line, i) => (
            <li key={i}>{line}</li>
          ))}
        </ul>
        <h3>Filters of the saved view it would make</h3>
        <dl className="facts">
          {Object.entries(filters).map(([k, v]) => (
            <div key={k} style={{ display: 'contents' }}>
              <dt>{k}</dt>
              <dd>{v === null ? <span className="muted">any</span> : <code>{String(v)}</code>}</dd>
            </div>
          ))}
        </dl>
      </section>
    );
  }
  const b = p.backtest;
  return (
    <section>
      <h2>Proposed alert rule: {str(payload.name) ?? p.title}</h2>
      <p>{strings(payload.rationale).join(' ')}</p>
      <h3>Predicate</h3>
      <pre>{JSON.stringify(payload.predicate, null, 2)}</pre>
      {b && (
        <>
          <h3>Backtest over {b.lookbackDays} days</h3>
          {b.method === 'unsupported' ? (
            <p className="muted">This predicate cannot be replayed from hourly totals.</p>
          ) : (
            <div className="kpis">
              <Kpi label="Would have fired" value={b.firings} />
              <Kpi label="True alarms" value={b.TP} />
              <Kpi label="False alarms" value={b.FP} />
              <Kpi label="Incidents caught" value={`${b.caught} of ${b.incidents}`} />
              <Kpi label="Mean lead time" value={duration(b.meanLeadTimeSec)} />
            </div>
          )}
        </>
      )}
    </section>
  );
}

function Kpi({ label, value }: { label: string; value: number | string }) {
  return (
    <div className="kpi">
      <div className="value">{value}</div>
      <div className="label">{label}</div>
    </div>
  );
}
