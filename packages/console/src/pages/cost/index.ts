import type { PageDef } from '../../app/pages';

/** The cost page (the manifest's `/cost` uiPath). */
export const costPages: PageDef[] = [
  { path: '/cost', title: 'Cost', section: 'Analytics & cost', anyScope: ['read:empire'], load: () => import('./Cost') },
];
