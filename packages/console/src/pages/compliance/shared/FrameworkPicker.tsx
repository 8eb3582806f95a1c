import { useUrlState } from '../../../app/urlState';
import { useQuery } from '../../../app/useQuery';
import { Segmented } from '../../../components';
import { loadPosture } from './api';

export const DEFAULT_FRAMEWORK = 'soc2';

/** The framework in the address (`?framework=`), `soc2` when none is given. */
export function useFrameworkParam(): string {
  return useUrlState().get('framework', DEFAULT_FRAMEWORK);
}

/** The shipped frameworks as toggle buttons named by their keys (from the posture read; short enough for a narrow window), the chosen one kept in the address. */
export function FrameworkPicker() {
  const framework = useFrameworkParam();
  const posture = useQuery(loadPosture, []);
  const frameworks = posture.data?.frameworks ?? [];
  const keys = frameworks.length > 0 ? frameworks.map((f) => f.framework) : [framework];
  return <Segmented label="Framework" param="framework" options={keys} fallback={framework} />;
}
