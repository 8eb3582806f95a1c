import type { PageDef } from '../../app/pages';

/** The analytics pages (the manifest's `/analytics` uiPath). */
export const analyticsPages: PageDef[] = [
  { path: '/analytics', title: 'Analytics', section: 'Analytics & cost', anyScope: ['read:empire'], load: () => import('./Analytics') },
];
