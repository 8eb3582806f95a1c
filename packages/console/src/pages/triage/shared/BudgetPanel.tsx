import { useState } from 'react';
import { useAction, useQuery } from '../../../app/useQuery';
import { useUrlState } from '../../../app/urlState';
import { Can } from '../../../auth/session';
import { DataTable, Field, Form, Panel, Time } from '../../../components';
import { type Budget, readBudget, setBudget } from './api';
import { dollars } from './labels';

const thisMonth = () => new Date().toISOString().slice(0, 7);

/** The share of a UTC month gone by now: 1 for a past month, 0 for a future one. */
function monthElapsed(month: string, now = Date.now()): number {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const start = Date.UTC(y, m - 1, 1);
  const end = Date.UTC(y, m, 1);
  return Math.min(1, Math.max(0, (now - start) / (end - start)));
}

/** Spend against budget as a bar, with a tick where an even burn would be by now. */
function Burn({ budget, elapsed }: { budget: Budget; elapsed: number }) {
  const spent = Math.min(100, budget.pctSpent);
  return (
    <div
      className={`burn${budget.pctSpent >= 100 ? ' over' : ''}`}
      role="img"
      aria-label={`${budget.pctSpent.toFixed(1)}% spent with ${(elapsed * 100).toFixed(0)}% of the month gone`}
      title={`${budget.pctSpent.toFixed(1)}% spent; an even burn would be at ${(elapsed * 100).toFixed(0)}%`}
    >
      <span style={{ width: `${spent}%` }} />
      <i className="month" style={{ left: `${elapsed * 100}%` }} aria-hidden="true" />
    </div>
  );
}

/** The month's model budget per bucket with its burn, and the form that sets one (`?month=`). */
export function BudgetPanel() {
  const { get, set } = useUrlState();
  const month = /^\d{4}-(0[1-9]|1[0-2])$/.test(get('month')) ? get('month') : thisMonth();
  const budgets = useQuery(() => readBudget(month), [month]);
  const elapsed = monthElapsed(month);
  return (
    <>
      <Panel
        title={`Model budget, ${month}`}
        state={budgets}
        minHeight={180}
        isEmpty={(d) => d.budgets.length === 0}
        empty="No budget buckets this month."
        actions={
          <label className="field inline">
            <span className="field-label">Month</span>
            <input aria-label="Month" type="month" value={month} onChange={(e) => set({ month: e.target.value === thisMonth() ? null : e.target.value || null })} />
          </label>
        }
      >
        {(d) => (
          <DataTable
            caption="Budget buckets: * is every run; a toolset's bucket holds the postmortems of its incidents"
            rows={d.budgets}
            rowKey={(b) => b.toolset}
            columns={[
              { key: 'toolset', label: 'Bucket', sortValue: (b) => b.toolset, render: (b) => <code>{b.toolset}</code> },
              { key: 'spent', label: 'Spent', align: 'right', sortValue: (b) => b.spentUsdCents, render: (b) => dollars(b.spentUsdCents) },
              { key: 'budget', label: 'Budget', align: 'right', sortValue: (b) => b.budgetUsdCents, render: (b) => dollars(b.budgetUsdCents) },
              { key: 'pct', label: 'Spent %', align: 'right', sortValue: (b) => b.pctSpent, render: (b) => `${b.pctSpent.toFixed(1)}%` },
              { key: 'burn', label: 'Burn', render: (b) => <Burn budget={b} elapsed={elapsed} /> },
              {
                key: 'state',
                label: 'State',
                sortValue: (b) => (b.isDegraded ? 1 : 0),
                render: (b) =>
                  b.isDegraded ? (
                    <span>
                      <span className="badge bad">deferring</span>
                      {b.degradedUntil && (
                        <span className="muted">
                          {' '}
                          until <Time at={b.degradedUntil} />
                        </span>
                      )}
                    </span>
                  ) : (
                    <span className="badge ok">running</span>
                  ),
              },
            ]}
          />
        )}
      </Panel>
      <Can scope="write:alerts">
        <section className="panel">
          <h2>Set a budget</h2>
          <SetBudgetForm month={month} onSet={budgets.reload} />
        </section>
      </Can>
    </>
  );
}

function SetBudgetForm({ month, onSet }: { month: string; onSet: () => void }) {
  const [toolset, setToolset] = useState('*');
  const [usd, setUsd] = useState('');
  const [until, setUntil] = useState('');
  const [clear, setClear] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const save = useAction(setBudget);
  return (
    <Form
      label="Set a model budget"
      busy={save.busy}
      error={save.error}
      submitLabel="Set the budget"
      onSubmit={() => {
        setDone(null);
        const cents = usd.trim() === '' ? undefined : Math.round(Number(usd) * 100);
        const degradedUntil = clear ? null : until ? new Date(until).toISOString() : undefined;
        void save
          .execute({ month, toolset: toolset.trim() || '*', ...(cents === undefined ? {} : { budgetUsdCents: cents }), ...(degradedUntil === undefined ? {} : { degradedUntil }) })
          .then((answer) => {
            if (!answer) return;
            setDone(`${answer.toolset} in ${answer.month}: ${dollars(answer.budgetUsdCents)}, ${answer.pctSpent.toFixed(1)}% spent.`);
            onSet();
          });
      }}
    >
      <Field label="Bucket" hint="* for every run, or a toolset's name.">
        <input value={toolset} onChange={(e) => setToolset(e.target.value)} maxLength={128} />
      </Field>
      <Field label={`Budget for ${month} (US dollars)`} hint="Empty keeps the current budget; 0 defers the non-safety agents all month.">
        <input type="number" min={0} step="0.01" value={usd} onChange={(e) => setUsd(e.target.value)} />
      </Field>
      <Field label="Defer the non-safety agents until" hint="Optional, in your time zone; empty keeps the current setting.">
        <input type="datetime-local" value={until} disabled={clear} onChange={(e) => setUntil(e.target.value)} />
      </Field>
      <label className="check">
        <input type="checkbox" checked={clear} onChange={(e) => setClear(e.target.checked)} /> Stop deferring (clear the date)
      </label>
      {done && (
        <p role="status" className="ok-box">
          {done}
        </p>
      )}
    </Form>
  );
}
