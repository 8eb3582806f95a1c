import { useUrlState } from '../../../app/urlState';
import { DAY_RANGES, type DayRange, dayRangeOf } from './days';

/** The range of days, kept in the address (`?days=30`). */
export function DayRangePicker({ fallback = 30 }: { fallback?: DayRange }) {
  const { get, set } = useUrlState();
  const value = dayRangeOf(get('days'), fallback);
  return (
    <div className="segmented" role="group" aria-label="Days">
      {DAY_RANGES.map((d) => (
        <button key={d} type="button" aria-pressed={value === d} onClick={() => set({ days: String(d) })}>
          {d} days
        </button>
      ))}
    </div>
  );
}
