import { useUrlState } from '../../../app/urlState';

/**
 * The windows one endpoint takes (the shared WindowPicker offers 1h to 30d, which these do not
 * all accept), kept in the address as `?window=`.
 */
export function useWindowParam<W extends string>(windows: readonly W[], fallback: W): W {
  const value = useUrlState().get('window');
  return (windows as readonly string[]).includes(value) ? (value as W) : fallback;
}

export function WindowButtons<W extends string>({ windows, fallback }: { windows: readonly W[]; fallback: W }) {
  const { set } = useUrlState();
  const current = useWindowParam(windows, fallback);
  return (
    <div className="segmented" role="group" aria-label="Time window">
      {windows.map((w) => (
        <button key={w} type="button" aria-pressed={current === w} onClick={() => set({ window: w })}>
          {w}
        </button>
      ))}
    </div>
  );
}
