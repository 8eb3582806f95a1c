import type { PageDef } from '../../app/pages';

/** The honeypot domain's pages (the manifest's `/honeypot…` uiPaths). */
export const honeypotPages: PageDef[] = [
  { path: '/honeypot', title: 'Dashboard', section: 'Honeypot', anyScope: ['read:dashboard'], load: () => import('./Dashboard') },
];
