import { describe, expect, it } from 'vitest';
import { formatKpi } from './Kpi';
import { describePredicate } from './predicates';

describe('an alert predicate in words', () => {
  it('says what each kind waits for', () => {
    expect(describePredicate({ kind: 'empire_count_gte', count: 500, windowMinutes: 15, eventType: 'crawl.page' })).toBe('≥ 500 events of type crawl.page in 15 min');
    expect(describePredicate({ kind: 'cross_toolset_join', otherToolset: 'probe-kit', windowMinutes: 60, minTenants: 2 })).toBe(
      '≥ 2 tenant(s) with events here and in probe-kit within 60 min',
    );
    expect(describePredicate({ kind: 'graph_lag_gte', lagSec: 600 })).toBe('graph materialiser behind by ≥ 600 s');
    expect(describePredicate({ kind: 'something_new' })).toBe('something_new');
  });
});

describe('a KPI number', () => {
  it('keeps the precision the service asks for, and says when there is none', () => {
    expect(formatKpi({ value: 98.456, precision: 1 })).toBe((98.5).toLocaleString(undefined, { minimumFractionDigits: 1 }));
    expect(formatKpi({ value: 3, precision: 0 })).toBe('3');
    expect(formatKpi({ value: null, precision: 1 })).toBeNull();
  });
});
