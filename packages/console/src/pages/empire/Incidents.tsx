import { useUrlState } from '../../app/urlState';
import { FilterSelect } from '../../components';
import { IncidentDetail } from './shared/IncidentDetail';
import { IncidentList } from './shared/IncidentList';
import { ToolsetPicker, useKnownToolsets } from './shared/toolsets';

const STATUSES = ['open', 'acknowledged', 'resolved'] as const;
const SEVERITIES = ['critical', 'major', 'minor'] as const;
type Status = (typeof STATUSES)[number];
type Severity = (typeof SEVERITIES)[number];

const oneOf = <T extends string>(values: readonly T[], value: string): T | undefined => (values as readonly string[]).includes(value) ? (value as T) : undefined;

/** Incidents of the toolsets: filtered and paged; one opened beside the list to acknowledge or resolve it. */
export default function Incidents() {
  const { get, set } = useUrlState();
  const known = useKnownToolsets();
  const toolset = get('toolset');
  const status = oneOf<Status>(STATUSES, get('status'));
  const severity = oneOf<Severity>(SEVERITIES, get('severity'));
  const selected = get('incident');
  const filters = { toolset, status, severity };
  return (
    <>
      <div className="page-head">
        <h1>Incidents</h1>
        <div className="toolbar">
          <ToolsetPicker toolset={toolset} known={known} allowNone />
          <FilterSelect label="Status" value={status ?? ''} options={STATUSES} anyLabel="Every status" onChange={(value) => set({ status: value || null })} />
          <FilterSelect label="Severity" value={severity ?? ''} options={SEVERITIES} anyLabel="Every severity" onChange={(value) => set({ severity: value || null })} />
        </div>
      </div>
      {selected && <IncidentDetail key={selected} id={selected} onClose={() => set({ incident: null })} />}
      {/* A new filter starts again from the newest page. */}
      <IncidentList key={JSON.stringify(filters)} {...filters} selected={selected} onSelect={(id) => set({ incident: id })} />
    </>
  );
}
