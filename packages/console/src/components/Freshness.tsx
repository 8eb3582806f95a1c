import { Time } from './Time';

export interface FreshnessInfo {
  asOf: string | null;
  producer: string;
  schedule?: string | null;
  refresh?: string | null;
  reason?: string | null;
}

/** How fresh an answer is, as the service states it (`freshness`): never guessed by the page. */
export function Freshness({ freshness }: { freshness: FreshnessInfo | null | undefined }) {
  if (!freshness) return null;
  return (
    <p className="freshness muted">
      {freshness.asOf ? (
        <>
          As of <Time at={freshness.asOf} />
        </>
      ) : (
        'Not computed yet'
      )}{' '}
      ({freshness.producer}
      {freshness.schedule ? `, ${freshness.schedule}` : ''}){freshness.reason ? ` — ${freshness.reason}` : ''}
    </p>
  );
}
