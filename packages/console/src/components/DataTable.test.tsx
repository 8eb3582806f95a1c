import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { type Column, DataTable } from './DataTable';

interface Row {
  name: string;
  count: number;
}

const rows: Row[] = [
  { name: 'gptbot', count: 5 },
  { name: 'claudebot', count: 12 },
  { name: 'bytespider', count: 1 },
  { name: 'ccbot', count: 7 },
  { name: 'amazonbot', count: 3 },
];
const columns: Column<Row>[] = [
  { key: 'name', label: 'Agent', sortValue: (r) => r.name },
  { key: 'count', label: 'Events', sortValue: (r) => r.count, align: 'right' },
];

/** The first cell of each body row, top to bottom. */
const names = () =>
  within(screen.getByRole('table'))
    .getAllByRole('row')
    .slice(1)
    .map((tr) => tr.querySelector('td')?.textContent);

afterEach(cleanup);

describe('DataTable', () => {
  it('keeps the given order until a column is clicked, then sorts by it, and reverses on a second click', () => {
    render(<DataTable columns={columns} rows={rows} rowKey={(r) => r.name} />);
    expect(names()).toEqual(['gptbot', 'claudebot', 'bytespider', 'ccbot', 'amazonbot']);

    fireEvent.click(screen.getByRole('button', { name: /Events/ }));
    expect(names()).toEqual(['bytespider', 'amazonbot', 'gptbot', 'ccbot', 'claudebot']);
    expect(screen.getByRole('columnheader', { name: /Events/ }).getAttribute('aria-sort')).toBe('ascending');

    fireEvent.click(screen.getByRole('button', { name: /Events/ }));
    expect(names()).toEqual(['claudebot', 'ccbot', 'gptbot', 'amazonbot', 'bytespider']);
    expect(screen.getByRole('columnheader', { name: /Events/ }).getAttribute('aria-sort')).toBe('descending');

    fireEvent.click(screen.getByRole('button', { name: /Agent/ }));
    expect(names()).toEqual(['amazonbot', 'bytespider', 'ccbot', 'claudebot', 'gptbot']);
    expect(screen.getByRole('columnheader', { name: /Events/ }).getAttribute('aria-sort')).toBe('none');
  });

  it('pages a long list, and sorts across every page rather than within one', () => {
    render(<DataTable columns={columns} rows={rows} rowKey={(r) => r.name} pageSize={2} initialSort={{ key: 'count', direction: 'desc' }} />);
    expect(screen.getByText('Page 1 of 3 (5 rows)')).toBeTruthy();
    expect(names()).toEqual(['claudebot', 'ccbot']);
    expect(screen.getByRole('button', { name: 'Previous' }).hasAttribute('disabled')).toBe(true);

    fireEvent.click(screen.getByRole('button', { name: 'Next' }));
    expect(names()).toEqual(['gptbot', 'amazonbot']);
    fireEvent.click(screen.getByRole('button', { name: 'Next' }));
    expect(names()).toEqual(['bytespider']);
    expect(screen.getByText('Page 3 of 3 (5 rows)')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Next' }).hasAttribute('disabled')).toBe(true);

    fireEvent.click(screen.getByRole('button', { name: 'Previous' }));
    expect(names()).toEqual(['gptbot', 'amazonbot']);
  });

  it('has no pager when every row fits, and says what is missing when there are no rows', () => {
    const { rerender } = render(<DataTable columns={columns} rows={rows} rowKey={(r) => r.name} />);
    expect(screen.queryByRole('navigation', { name: 'Pages' })).toBeNull();
    rerender(<DataTable columns={columns} rows={[]} rowKey={(r) => r.name} empty="No agents in this window." />);
    expect(screen.queryByRole('table')).toBeNull();
    expect(screen.getByText('No agents in this window.')).toBeTruthy();
  });

  it('renders a column with its render function and leaves a column without a sort value unsortable', () => {
    render(
      <DataTable
        columns={[{ key: 'name', label: 'Agent', render: (r: Row) => <code>{r.name.toUpperCase()}</code> }, columns[1]!]}
        rows={rows.slice(0, 1)}
        rowKey={(r) => r.name}
      />,
    );
    expect(screen.getByText('GPTBOT').tagName).toBe('CODE');
    expect(within(screen.getByRole('columnheader', { name: 'Agent' })).queryByRole('button')).toBeNull();
  });
});
