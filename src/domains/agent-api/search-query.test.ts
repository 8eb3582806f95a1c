import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_QUERY_TERMS, queryTerms, toPrefixTsquery } from './search-query.ts';

describe('toPrefixTsquery', () => {
  it('makes every word a prefix term that must match', () => {
    expect(toPrefixTsquery('Kubernetes pods')).toBe('kubernetes:* & pods:*');
    expect(toPrefixTsquery('  DNS,  dns; TLS!  ')).toBe('dns:* & tls:*');
    expect(toPrefixTsquery('café 3.5')).toBe('café:* & 3:* & 5:*');
  });

  it('gives null when nothing searchable is left', () => {
    expect(toPrefixTsquery('')).toBeNull();
    expect(toPrefixTsquery("&|!():*' -- ")).toBeNull();
  });

  it('keeps at most MAX_QUERY_TERMS terms', () => {
    expect(queryTerms(Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '))).toHaveLength(MAX_QUERY_TERMS);
  });

  it('never lets tsquery syntax through, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (input) => {
        const tsquery = toPrefixTsquery(input);
        if (tsquery === null) return;
        for (const term of tsquery.split(' & ')) expect(term).toMatch(/^[\p{L}\p{N}]{1,64}:\*$/u);
      }),
    );
  });
});
