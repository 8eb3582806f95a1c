import type { PageDef } from '../../app/pages';

const READ = ['read:empire'];

/** The empire's pages (toolset operations) and provenance: the manifest's `/empire…` and `/provenance` uiPaths. */
export const empirePages: PageDef[] = [
  { path: '/empire', title: 'Overview', section: 'Empire', anyScope: READ, load: () => import('./Overview') },
  { path: '/empire/toolset', title: 'Per toolset', section: 'Empire', anyScope: READ, load: () => import('./Toolset') },
  { path: '/empire/incidents', title: 'Incidents', section: 'Empire', anyScope: READ, load: () => import('./Incidents') },
  { path: '/empire/forecasts', title: 'Forecasts', section: 'Empire', anyScope: READ, load: () => import('./Forecasts') },
  { path: '/empire/slo', title: 'Ingest SLO', section: 'Empire', anyScope: READ, load: () => import('./Slo') },
  { path: '/empire/lineage', title: 'Lineage', section: 'Empire', anyScope: READ, load: () => import('./Lineage') },
  { path: '/empire/alerts', title: 'Alert rules', section: 'Empire', anyScope: ['read:alerts'], load: () => import('./Alerts') },
  { path: '/empire/replay', title: 'Replay', section: 'Empire', anyScope: READ, load: () => import('./Replay') },
  { path: '/provenance', title: 'Signing keys', section: 'Empire', anyScope: READ, load: () => import('./Provenance') },
];
