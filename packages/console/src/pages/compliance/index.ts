import type { PageDef } from '../../app/pages';

/**
 * The compliance pages (the manifest's `/compliance…` uiPaths): posture, controls with their
 * replay and override, evidence bundles, the narrator and subprocessors. Reads take `read:empire`;
 * the writes on them that take `write:alerts` show only to operators who have it.
 */
export const compliancePages: PageDef[] = [
  { path: '/compliance', title: 'Posture', section: 'Compliance', anyScope: ['read:empire'], load: () => import('./Posture') },
  { path: '/compliance/controls', title: 'Controls', section: 'Compliance', anyScope: ['read:empire'], load: () => import('./Controls') },
  { path: '/compliance/bundles', title: 'Evidence bundles', section: 'Compliance', anyScope: ['read:empire'], load: () => import('./Bundles') },
  { path: '/compliance/narrator', title: 'Narrator', section: 'Compliance', anyScope: ['read:empire'], load: () => import('./Narrator') },
  { path: '/compliance/subprocessors', title: 'Subprocessors', section: 'Compliance', anyScope: ['read:empire'], load: () => import('./Subprocessors') },
];
