import type { PageDef } from '../../app/pages';

/** Operations: scheduled jobs and the operator audit log (the manifest's `/ops/…` uiPaths). */
export const opsPages: PageDef[] = [
  { path: '/ops/jobs', title: 'Scheduled jobs', section: 'Ops', anyScope: ['read:dashboard'], load: () => import('./Jobs') },
  { path: '/ops/audit', title: 'Audit log', section: 'Ops', anyScope: ['read:empire'], load: () => import('./Audit') },
];
