import { expect, it } from 'vitest';
import { buildValidatorFactory } from '../../../platform/http/validation.ts';

// The predicate schemas build when the module loads and compile in the server's request validator.
// Imported inside the test, so that a schema that cannot be built or compiled fails this test (a
// failure at import would fail only the collection of the files that import it).
it('the predicate schemas build and compile in the request validator', async () => {
  const { Predicate, PredicateBody } = await import('./predicates.ts');
  const factory = buildValidatorFactory()({}, {});
  for (const schema of [Predicate, PredicateBody]) {
    const validate = factory({ schema, method: 'POST', url: '/predicate', httpPart: 'body' }) as (data: unknown) => boolean;
    expect(validate({ kind: 'event_count_above', count: 1, windowMinutes: 15, uaClass: 'LIAR' })).toBe(true);
  }
});
