import { describe, expect, it } from 'vitest';
import { cellSortValue, cellText } from './cells';

describe('query cells', () => {
  it('read scalars as they are and null as null', () => {
    expect(cellText('shop-eu')).toBe('shop-eu');
    expect(cellText(2)).toBe('2');
    expect(cellText(false)).toBe('false');
    expect(cellText(null)).toBe('null');
    expect(cellSortValue(null)).toBeNull();
    expect(cellSortValue(7)).toBe(7);
  });

  it('read a node by kind and key, an edge by kind and ends, a walk by its edges', () => {
    expect(cellText({ id: 3, kind: 'Tenant', key: 'shop-eu', props: {} })).toBe('Tenant shop-eu');
    const edge = { id: 9, kind: 'CAUSED_BY', src: 1, dst: 2, props: {} };
    expect(cellText(edge)).toBe('CAUSED_BY 1→2');
    expect(cellText([edge, { ...edge, id: 10 }])).toBe('2 edges: CAUSED_BY, CAUSED_BY');
    expect(cellText([edge])).toBe('1 edge: CAUSED_BY');
    expect(cellSortValue({ id: 3, kind: 'Tenant', key: 'shop-eu', props: {} })).toBe('Tenant shop-eu');
  });

  it('fall back to JSON for anything else', () => {
    expect(cellText({ a: 1 })).toBe('{"a":1}');
    expect(cellText([1, 2])).toBe('[1,2]');
  });
});
