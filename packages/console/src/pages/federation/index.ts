import type { PageDef } from '../../app/pages';

/**
 * The federation pages (the manifest's `/federation…` uiPaths): the regions registry with this
 * deployment's digest, parity, replay and the region SLO; the overview merged over every region.
 */
export const federationPages: PageDef[] = [
  { path: '/federation/regions', title: 'Regions', section: 'Federation', anyScope: ['read:empire'], load: () => import('./Regions') },
  { path: '/federation/overview', title: 'Federated overview', section: 'Federation', anyScope: ['read:empire'], load: () => import('./Overview') },
];
