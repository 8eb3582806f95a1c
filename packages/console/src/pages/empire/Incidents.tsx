import { useUrlState } from '../../app/urlState';
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
          <label className="field inline">
            <span className="sr-only">Status</span>
            <select aria-label="Status" value={status ?? ''} onChange={(e) => set({ status: e.target.value || null })}>
              <option value="">Every status</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <label className="field inline">
            <span className="sr-only">Severity</span>
            <select aria-label="Severity" value={severity ?? ''} onChange={(e) => set({ severity: e.target.value || null })}>
              <option value="">Every severity</option>
              {SEVERITIES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
        </div>
      </div>
      {selected && <IncidentDetail key={selected} id={selected} onClose={() => set({ incident: null })} />}
      {/* A new filter starts again from the newest page. */}
      <IncidentList key={JSON.stringify(filters)} {...filters} selected={selected} onSelect={(id) => set({ incident: id })} />
    </>
  );
}
