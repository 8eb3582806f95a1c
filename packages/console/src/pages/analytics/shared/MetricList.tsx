import type { QueryState } from '../../../app/useQuery';
import { DataTable, Panel } from '../../../components';
import type { Metric } from './api';

/** The metrics the warehouse keeps; picking one charts it. */
export function MetricList({ state, selected, onPick }: { state: QueryState<{ metrics: Metric[] }>; selected: string; onPick: (key: string) => void }) {
  return (
    <Panel title="Metrics" state={state} minHeight={160} isEmpty={(d) => d.metrics.length === 0} empty="This deployment keeps no metrics.">
      {(d) => (
        <DataTable
          caption="Metrics the warehouse keeps"
          rows={d.metrics}
          rowKey={(m) => m.key}
          pageSize={12}
          columns={[
            { key: 'title', label: 'Metric', sortValue: (m) => m.title, render: (m) => <strong>{m.title}</strong> },
            { key: 'key', label: 'Key', sortValue: (m) => m.key, render: (m) => <code>{m.key}</code> },
            { key: 'unit', label: 'Unit', sortValue: (m) => m.unit },
            { key: 'dimensions', label: 'Dimensions', render: (m) => m.dimensions.join(', ') || '—' },
            { key: 'description', label: 'What it counts', render: (m) => <span className="muted">{m.description}</span> },
            {
              key: 'chart',
              label: 'Chart',
              render: (m) => (
                <button type="button" aria-pressed={selected === m.key} aria-label={`Chart ${m.title}`} onClick={() => onPick(m.key)}>
                  {selected === m.key ? 'Charted' : 'Chart'}
                </button>
              ),
            },
          ]}
        />
      )}
    </Panel>
  );
}
