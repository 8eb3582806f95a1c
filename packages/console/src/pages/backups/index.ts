import type { PageDef } from '../../app/pages';

/** The backup pages (the manifest's `/backups…` uiPaths). */
export const backupPages: PageDef[] = [
  { path: '/backups', title: 'Snapshots', section: 'Backups & audit', anyScope: ['read:empire'], load: () => import('./Snapshots') },
  { path: '/backups/drills', title: 'Failover drills', section: 'Backups & audit', anyScope: ['read:empire'], load: () => import('./Drills') },
  { path: '/backups/cross-toolset', title: 'Cross-toolset restore', section: 'Backups & audit', anyScope: ['read:empire'], load: () => import('./CrossToolset') },
];
