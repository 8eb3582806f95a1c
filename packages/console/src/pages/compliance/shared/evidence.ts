/** An endpoint as the manifest lists it: enough to find the console page that shows it. */
export interface RoutedEndpoint {
  method: string;
  path: string;
  uiPath?: string | null;
}

const templateOf = (path: string) => new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}/]+\}/g, '[^/]+')}$`);

/**
 * The console page that shows what an evidence URL reads: the `uiPath` of the GET endpoint whose
 * path the URL's path matches (`{param}` matching one segment), or null when none does. The URL's
 * host is not compared — evidence URLs are absolute under the service's public URL, which need
 * not be the address the console was opened at — nor its query, which is the API's, not the page's.
 */
export function consolePathFor(url: string, endpoints: readonly RoutedEndpoint[]): string | null {
  let path: string;
  try {
    path = new URL(url, 'http://console.invalid').pathname;
  } catch {
    return null;
  }
  const exact = endpoints.find((e) => e.method === 'GET' && e.uiPath && e.path === path);
  if (exact) return exact.uiPath ?? null;
  const templated = endpoints.find((e) => e.method === 'GET' && e.uiPath && e.path.includes('{') && templateOf(e.path).test(path));
  return templated?.uiPath ?? null;
}

/** A signed link made same-origin: the service that serves the console serves the files too, whatever its public URL says. */
export function sameOrigin(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return url;
  }
}
