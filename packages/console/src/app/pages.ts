import type { ComponentType } from 'react';

/**
 * One page of the console. Each domain lists its pages in `pages/<domain>/index.ts`; the list in
 * `pages/index.ts` is the console's whole route table, and a test holds it against every `uiPath`
 * the service's manifest names.
 */
export interface PageDef {
  /** The address under /console, e.g. `/honeypot/fleet`; the manifest's `uiPath` for the endpoints it shows. */
  path: string;
  title: string;
  /** The navigation group it is listed under. */
  section: string;
  /** Scopes any one of which shows the page; empty or absent: every signed-in operator. */
  anyScope?: readonly string[];
  /** Hidden from the navigation (reached from another page), still routable. */
  hidden?: boolean;
  load: () => Promise<{ default: ComponentType }>;
}
