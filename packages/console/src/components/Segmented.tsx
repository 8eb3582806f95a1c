import { useUrlState } from '../app/urlState';

/** One of a fixed list of choices kept in the address (`?<param>=`), the fallback when absent or unknown. */
export function useChoiceParam<C extends string>(param: string, options: readonly C[], fallback: C): C {
  const value = useUrlState().get(param);
  return (options as readonly string[]).includes(value) ? (value as C) : fallback;
}

/**
 * A row of toggle buttons for one choice kept in the address: a time window, a status filter,
 * a grouping. The pressed one is announced (`aria-pressed`); `labelOf` words each option.
 */
export function Segmented<C extends string>({
  label,
  param,
  options,
  fallback,
  labelOf = (o) => o,
}: {
  label: string;
  param: string;
  options: readonly C[];
  fallback: C;
  labelOf?: (option: C) => string;
}) {
  const { set } = useUrlState();
  const current = useChoiceParam(param, options, fallback);
  return (
    <div className="segmented" role="group" aria-label={label}>
      {options.map((o) => (
        <button key={o} type="button" aria-pressed={current === o} onClick={() => set({ [param]: o })}>
          {labelOf(o)}
        </button>
      ))}
    </div>
  );
}
