import { useQuery } from '../../../app/useQuery';
import { useUrlState } from '../../../app/urlState';
import { DataTable, Field, Panel } from '../../../components';
import { COHORTS, loadCohort } from './api';
import { dayBounds } from './days';

const pct = (fraction: number) => `${(fraction * 100).toLocaleString(undefined, { maximumFractionDigits: 1 })}%`;

/** A retention cohort over the range (`?cohort=…`): members by anchor day, retained day by day. */
export function CohortPanel({ days }: { days: number }) {
  const { get, set } = useUrlState();
  const key = COHORTS.find((c) => c.key === get('cohort'))?.key ?? COHORTS[0]!.key;
  const { from, to } = dayBounds(days);
  const state = useQuery(() => loadCohort({ key, from, to }), [key, from, to]);
  return (
    <Panel
      title="Cohort retention"
      state={state}
      minHeight={300}
      actions={
        <Field label="Cohort">
          <select value={key} onChange={(e) => set({ cohort: e.target.value })}>
            {COHORTS.map((c) => (
              <option key={c.key} value={c.key}>
                {c.title}
              </option>
            ))}
          </select>
        </Field>
      }
    >
      {(c) => (
        <>
          <p>
            <strong>{c.cohortSize.toLocaleString()}</strong> members ({c.anchorLabel}, {c.from} to {c.to} exclusive); retained: {c.followLabel}.
          </p>
          {c.cohortSize === 0 ? (
            <p className="empty">No members in this range: widen the range, or come back once {c.anchorLabel} has happened.</p>
          ) : (
            <DataTable
              caption={`Retention of ${c.key}`}
              rows={c.buckets}
              rowKey={(b) => String(b.day)}
              columns={[
                { key: 'day', label: 'Day after anchor', sortValue: (b) => b.day },
                { key: 'eligible', label: 'Eligible', align: 'right', sortValue: (b) => b.eligible },
                { key: 'retained', label: 'Retained', align: 'right', sortValue: (b) => b.retained },
                {
                  key: 'pct',
                  label: 'Retention',
                  sortValue: (b) => b.pct,
                  render: (b) => (
                    <span className="cohort-bar" title={`${b.retained} of ${b.eligible}`}>
                      <span aria-hidden="true" style={{ display: 'inline-block', width: `${Math.round(b.pct * 120)}px`, height: '0.7em', background: '#93c5fd', marginRight: '0.4rem', borderRadius: 2 }} />
                      {b.eligible === 0 ? <span className="muted">not begun</span> : pct(b.pct)}
                    </span>
                  ),
                },
              ]}
            />
          )}
        </>
      )}
    </Panel>
  );
}
