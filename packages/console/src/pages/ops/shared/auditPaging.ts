/**
 * The audit log pages backwards by cursor (the last row's seqNo). To step back towards newer rows
 * the address keeps the cursors of the pages before this one (`back`, "-" for the first page),
 * so a shared link opens the same page and its "Newer" button still works.
 */
export interface AuditPage {
  cursor: string | null;
  back: string[];
}

const FIRST = '-';

export function readPage(cursor: string, back: string): AuditPage {
  return { cursor: cursor === '' ? null : cursor, back: back === '' ? [] : back.split(',') };
}

/** The address changes that move to the older page starting after `nextCursor`. */
export function olderPage(page: AuditPage, nextCursor: string): Record<string, string | null> {
  return { cursor: nextCursor, back: [...page.back, page.cursor ?? FIRST].join(',') };
}

/** The address changes that move one page towards the newest rows. */
export function newerPage(page: AuditPage): Record<string, string | null> {
  const previous = page.back.at(-1);
  const back = page.back.slice(0, -1);
  return { cursor: previous === undefined || previous === FIRST ? null : previous, back: back.length === 0 ? null : back.join(',') };
}

export const NEWEST: Record<string, null> = { cursor: null, back: null };
