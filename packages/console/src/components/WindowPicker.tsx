import { useUrlState, WINDOWS } from '../app/urlState';

/** The time window, kept in the address (`?window=24h`). */
export function WindowPicker({ fallback = '24h', name = 'window' }: { fallback?: string; name?: string }) {
  const { get, set } = useUrlState();
  const value = get(name, fallback);
  return (
    <div className="segmented" role="group" aria-label="Time window">
      {WINDOWS.map((w) => (
        <button key={w} type="button" aria-pressed={value === w} onClick={() => set({ [name]: w })}>
          {w}
        </button>
      ))}
    </div>
  );
}
