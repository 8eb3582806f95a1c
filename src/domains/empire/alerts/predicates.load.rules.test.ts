import { expect, it } from 'vitest';
import { buildValidatorFactory } from '../../../platform/http/validation.ts';

// The predicate schemas build when the module loads and compile in the server's request validator.
// Imported inside the test, so that a schema that cannot be built or compiled fails this test (a
// failure at import would fail only the collection of the files that import it, which StrykerJS's
// vitest runner does not count as a failing test).
it('the empire predicate schemas build and compile in the request validator', async () => {
  const { EmpirePredicate, EmpirePredicateBody } = await import('./predicates.ts');
  const factory = buildValidatorFactory()({}, {});
  for (const schema of [EmpirePredicate, EmpirePredicateBody]) {
    const validate = factory({ schema, method: 'POST', url: '/predicate', httpPart: 'body' }) as (data: unknown) => boolean;
    expect(validate({ kind: 'empire_count_gte', count: 10, windowMinutes: 15 })).toBe(true);
    expect(validate({ kind: 'cross_toolset_join', otherToolset: 'other-lab', windowMinutes: 15, minTenants: 1 })).toBe(true);
    expect(validate({ kind: 'graph_lag_gte', lagSec: 60 })).toBe(true);
  }
});
