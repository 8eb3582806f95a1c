import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { Time } from './Time';

afterEach(cleanup);

describe('Time', () => {
  it('shows the moment in the browser zone with its UTC form as the hover title and the ISO instant as datetime', () => {
    render(<Time at="2026-11-23T08:05:09.123+02:00" />);
    const time = screen.getByTitle('2026-11-23 06:05:09 UTC');
    expect(time.tagName).toBe('TIME');
    expect(time.getAttribute('datetime')).toBe('2026-11-23T06:05:09.123Z');
    const local = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date('2026-11-23T06:05:09.123Z'));
    expect(time.textContent).toBe(local);
  });

  it('shows a dash for no time, and the text as given when it is not a date', () => {
    const { container, rerender } = render(<Time at={null} />);
    expect(container.textContent).toBe('—');
    expect(container.querySelector('time')).toBeNull();
    rerender(<Time at="not a date" />);
    expect(container.textContent).toBe('not a date');
    expect(container.querySelector('time')).toBeNull();
  });
});
