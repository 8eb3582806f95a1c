import { describe, expect, it } from 'vitest';
import { NEWEST, newerPage, olderPage, readPage } from './auditPaging';

/** Applies address changes to a query string, as useUrlState's `set` does. */
function apply(params: URLSearchParams, changes: Record<string, string | null>): URLSearchParams {
  const next = new URLSearchParams(params);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === '') next.delete(k);
    else next.set(k, v);
  }
  return next;
}
const pageOf = (p: URLSearchParams) => readPage(p.get('cursor') ?? '', p.get('back') ?? '');

describe('audit paging in the address', () => {
  it('walks older page by page and back to the newest, keeping other filters', () => {
    let address = new URLSearchParams('verb=tenant.create');
    expect(pageOf(address)).toEqual({ cursor: null, back: [] });

    address = apply(address, olderPage(pageOf(address), '120'));
    expect(address.toString()).toBe('verb=tenant.create&cursor=120&back=-');
    address = apply(address, olderPage(pageOf(address), '80'));
    expect(pageOf(address)).toEqual({ cursor: '80', back: ['-', '120'] });

    address = apply(address, newerPage(pageOf(address)));
    expect(pageOf(address)).toEqual({ cursor: '120', back: ['-'] });
    address = apply(address, newerPage(pageOf(address)));
    expect(address.toString()).toBe('verb=tenant.create');

    address = apply(apply(address, olderPage(pageOf(address), '120')), NEWEST);
    expect(address.toString()).toBe('verb=tenant.create');
  });
});
