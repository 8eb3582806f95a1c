import { WINDOWS } from '../app/urlState';
import { Segmented, useChoiceParam } from './Segmented';

/** The windows an endpoint takes, kept in the address as `?window=`. */
export function useWindowParam<W extends string>(windows: readonly W[], fallback: W): W {
  return useChoiceParam('window', windows, fallback);
}

/** The time window (`?window=`): the endpoint's own windows, or 1h to 30d. */
export function WindowPicker<W extends string = (typeof WINDOWS)[number]>({ windows, fallback }: { windows?: readonly W[]; fallback?: W }) {
  const options = (windows ?? WINDOWS) as readonly W[];
  return <Segmented label="Time window" param="window" options={options} fallback={fallback ?? ('24h' as W)} />;
}
