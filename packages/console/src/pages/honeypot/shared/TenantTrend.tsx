import { api, unwrap } from '../../../api/client';
import { useQuery } from '../../../app/useQuery';
import { Sparkline } from '../../../components';

/** Sums an hourly series, oldest first, into days (the last chunk may be the current, partial day). */
export function dailySums(hours: readonly { count: number }[]): number[] {
  const days: number[] = [];
  const offset = hours.length % 24;
  for (let i = 0; i < hours.length; i++) {
    const day = Math.floor((i + (offset === 0 ? 0 : 24 - offset)) / 24);
    days[day] = (days[day] ?? 0) + hours[i]!.count;
  }
  return days;
}

/** A tenant's events a day over the 7-day dashboard window, as a sparkline. */
export function TenantTrend({ slug }: { slug: string }) {
  const state = useQuery(
    () => unwrap(api.GET('/api/observatory/v1/honeypot/dashboard', { params: { query: { tenant: slug, window: '7d' } } })),
    [slug],
    { refreshMs: 300_000 },
  );
  if (state.error && !state.data) return <span className="muted">no trend ({state.error.reason})</span>;
  if (!state.data) return <span className="muted" style={{ display: 'inline-block', width: 120, height: 28 }} aria-label="Loading the trend" />;
  return <Sparkline values={dailySums(state.data.eventsPerHour)} label={`${slug}: events a day over 7 days`} />;
}
