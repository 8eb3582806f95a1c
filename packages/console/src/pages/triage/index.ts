import type { PageDef } from '../../app/pages';

/** The triage pages (the manifest's `/empire/triage…` uiPaths). */
export const triagePages: PageDef[] = [
  { path: '/empire/triage', title: 'Inbox', section: 'Triage', anyScope: ['read:empire'], load: () => import('./Inbox') },
  { path: '/empire/triage/proposal', title: 'Proposal', section: 'Triage', anyScope: ['read:empire'], hidden: true, load: () => import('./Proposal') },
  { path: '/empire/triage/runs', title: 'Runs', section: 'Triage', anyScope: ['read:empire'], load: () => import('./Runs') },
  { path: '/empire/triage/metrics', title: 'Metrics and budget', section: 'Triage', anyScope: ['read:empire'], load: () => import('./Metrics') },
  { path: '/empire/triage/postmortems', title: 'Postmortems', section: 'Triage', anyScope: ['read:empire'], load: () => import('./Postmortems') },
];
