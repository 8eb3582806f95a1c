import { Link } from 'react-router';
import { controlsPath, type Control } from './api';
import { consolePathFor, type RoutedEndpoint } from './evidence';

/**
 * Where a control's evidence is read: the console page of the endpoint its evidence URL names
 * (found through the manifest), or the control's own replay when its evidence is its stored
 * input; the API URL itself is the hover title, and the link when no page shows it.
 */
export function EvidenceLink({ control, framework, endpoints }: { control: Control; framework: string; endpoints: readonly RoutedEndpoint[] | null }) {
  const url = control.latestEvidenceUrl;
  if (!url) return <span className="muted">—</span>;
  const label = `Evidence of ${control.controlId}`;
  const page = endpoints ? consolePathFor(url, endpoints) : null;
  if (page === '/compliance/controls')
    return (
      <Link to={controlsPath(framework, control.controlId)} title={url} aria-label={label}>
        stored input
      </Link>
    );
  if (page)
    return (
      <Link to={page} title={url} aria-label={label}>
        {page}
      </Link>
    );
  return (
    <a href={url} title={url} aria-label={label}>
      API
    </a>
  );
}
