import { useState } from 'react';
import { useAction, useQuery } from '../../../app/useQuery';
import { Can } from '../../../auth/session';
import { DataTable, Field, Form, Panel, Time } from '../../../components';
import { type Budget, loadBudgets, type SetBudgetBody, setBudget, usd } from './api';

/** How much of the month's budget is spent, with the thresholds crossed. */
function Burn({ budget }: { budget: Budget }) {
  const over = budget.crossedThresholds.length > 0;
  return (
    <span className="burn">
      <meter min={0} max={100} low={budget.alertAtPct[0] ?? 80} high={budget.alertAtPct.at(-1) ?? 100} optimum={0} value={Math.min(budget.observedPct, 100)} aria-label={`Burn of ${budget.scopeKey}`} />{' '}
      <strong className={over ? 'badge bad' : 'badge ok'}>{budget.observedPct.toLocaleString()}%</strong>
    </span>
  );
}

/** Every budget with its month's burn, and the form that sets one. */
export function BudgetsPanel({ refreshKey }: { refreshKey: number }) {
  const state = useQuery(loadBudgets, [refreshKey]);
  return (
    <Panel
      title="Budgets"
      state={state}
      minHeight={200}
      isEmpty={(d) => d.budgets.length === 0}
      empty="No budgets yet. Set one below: the month's spend is compared with it and alerts open at its thresholds."
    >
      {(d) => (
        <DataTable
          caption="Budgets with this month's burn (UTC)"
          rows={d.budgets}
          rowKey={(b) => b.id}
          columns={[
            { key: 'scope', label: 'Scope', sortValue: (b) => `${b.scope}:${b.scopeKey}`, render: (b) => (b.scope === 'empire' ? 'empire (every record)' : `${b.scope} `) },
            { key: 'scopeKey', label: 'Of', sortValue: (b) => b.scopeKey, render: (b) => <code>{b.scopeKey}</code> },
            { key: 'month', label: 'Month', render: (b) => b.monthBucket },
            { key: 'monthlyUsd', label: 'Budget', align: 'right', sortValue: (b) => b.monthlyUsd, render: (b) => usd(b.monthlyUsd) },
            { key: 'observedUsd', label: 'Spent', align: 'right', sortValue: (b) => b.observedUsd, render: (b) => usd(b.observedUsd) },
            { key: 'burn', label: 'Burn', sortValue: (b) => b.observedPct, render: (b) => <Burn budget={b} /> },
            {
              key: 'thresholds',
              label: 'Alerts at',
              render: (b) => b.alertAtPct.map((p) => (b.crossedThresholds.includes(p) ? `${p}% (crossed)` : `${p}%`)).join(', '),
            },
            { key: 'destinations', label: 'Sent to', render: (b) => (b.destinations.length === 0 ? <span className="muted">listed only</span> : b.destinations.map((x) => x.kind).join(', ')) },
            { key: 'updatedAt', label: 'Changed', sortValue: (b) => b.updatedAt, render: (b) => <Time at={b.updatedAt} /> },
          ]}
        />
      )}
    </Panel>
  );
}

function parseThresholds(text: string): number[] | null {
  const parts = text.split(/[\s,]+/).filter(Boolean).map(Number);
  return parts.length > 0 && parts.every((n) => Number.isInteger(n)) ? parts : null;
}

/** Creates or changes the monthly budget of one scope (POST {v1}/cost/budgets). */
export function SetBudgetForm({ onSaved }: { onSaved: () => void }) {
  const [scope, setScope] = useState<SetBudgetBody['scope']>('empire');
  const [scopeKey, setScopeKey] = useState('');
  const [monthly, setMonthly] = useState('');
  const [thresholds, setThresholds] = useState('50, 80, 100');
  const [saved, setSaved] = useState<string | null>(null);
  const action = useAction(setBudget);
  const [localError, setLocalError] = useState<string | null>(null);

  const submit = async () => {
    setSaved(null);
    const alertAtPct = parseThresholds(thresholds);
    if (!alertAtPct) return setLocalError('Thresholds are whole percentages separated by commas, e.g. 50, 80, 100.');
    setLocalError(null);
    const answer = await action.execute({ scope, scopeKey: scope === 'empire' ? '*' : scopeKey.trim(), monthlyUsd: Number(monthly), alertAtPct });
    if (answer) {
      setSaved(`Budget of ${answer.budget.scope} ${answer.budget.scopeKey} set to ${usd(answer.budget.monthlyUsd)}: ${answer.budget.observedPct}% spent this month.`);
      onSaved();
    }
  };

  return (
    <Can scope="write:alerts">
      <section className="panel">
        <h2>Set a budget</h2>
        <Form label="Set a budget" onSubmit={() => void submit()} busy={action.busy} error={action.error} submitLabel="Save the budget">
          <Field label="Scope" hint="The empire's budget counts every cost record; a toolset's or workspace's only its own.">
            <select value={scope} onChange={(e) => setScope(e.target.value as SetBudgetBody['scope'])}>
              <option value="empire">empire</option>
              <option value="toolset">toolset</option>
              <option value="workspace">workspace</option>
            </select>
          </Field>
          {scope !== 'empire' && (
            <Field label={scope === 'toolset' ? 'Toolset name' : 'Workspace key'}>
              <input value={scopeKey} onChange={(e) => setScopeKey(e.target.value)} required maxLength={128} />
            </Field>
          )}
          <Field label="Monthly budget (USD)">
            <input type="number" inputMode="decimal" min="0.000001" step="any" value={monthly} onChange={(e) => setMonthly(e.target.value)} required />
          </Field>
          <Field label="Alert at (% of the budget)" hint="Whole percentages, comma-separated; each opens an alert when the month's spend reaches it.">
            <input value={thresholds} onChange={(e) => setThresholds(e.target.value)} required />
          </Field>
          {localError && (
            <p className="error-note" role="alert">
              {localError}
            </p>
          )}
        </Form>
        {saved && (
          <p className="badge ok" role="status">
            {saved}
          </p>
        )}
      </section>
    </Can>
  );
}
