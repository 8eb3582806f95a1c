import { useState } from 'react';
import { useUrlState } from '../../app/urlState';
import { dayBounds, dayRangeOf } from '../analytics/shared/days';
import { DayRangePicker } from '../analytics/shared/DayRangePicker';
import { AlertsPanel } from './shared/AlertsPanel';
import { BudgetsPanel, SetBudgetForm } from './shared/BudgetsPanel';
import { RollupPanel, ToolsetSpendPanel } from './shared/SpendPanels';

/** Spend per toolset, vendor and sku, budgets with their month's burn, and cost alerts. */
export default function Cost() {
  const { get } = useUrlState();
  const { from, to } = dayBounds(dayRangeOf(get('days')));
  // A budget set or an alert moved changes the budgets and alerts shown: both load again.
  const [changes, setChanges] = useState(0);
  const changed = () => setChanges((n) => n + 1);
  return (
    <>
      <div className="page-head">
        <h1>Cost</h1>
        <div className="toolbar">
          <DayRangePicker />
        </div>
      </div>
      <div className="grid">
        <RollupPanel from={from} to={to} />
        <ToolsetSpendPanel from={from} to={to} />
      </div>
      <AlertsPanel refreshKey={changes} onChanged={changed} />
      <BudgetsPanel refreshKey={changes} />
      <SetBudgetForm onSaved={changed} />
    </>
  );
}
