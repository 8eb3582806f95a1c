import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { Panel } from '../../components';
import { loadMetrics } from './shared/api';
import { CohortPanel } from './shared/CohortPanel';
import { dayRangeOf } from './shared/days';
import { DayRangePicker } from './shared/DayRangePicker';
import { MetricChart } from './shared/MetricChart';
import { MetricList } from './shared/MetricList';

/** The warehouse's metrics charted per day, and the retention cohorts. */
export default function Analytics() {
  const { get, set } = useUrlState();
  const days = dayRangeOf(get('days'));
  const metrics = useQuery(loadMetrics, []);
  return (
    <>
      <div className="page-head">
        <h1>Analytics</h1>
        <div className="toolbar">
          <DayRangePicker />
        </div>
      </div>
      {metrics.data ? (
        <MetricChart metrics={metrics.data.metrics} days={days} />
      ) : (
        <Panel title="Metric chart" state={metrics} minHeight={380}>
          {() => null}
        </Panel>
      )}
      <CohortPanel days={days} />
      <MetricList state={metrics} selected={get('metric') || (metrics.data?.metrics[0]?.key ?? '')} onPick={(metric) => set({ metric, dims: null })} />
    </>
  );
}
