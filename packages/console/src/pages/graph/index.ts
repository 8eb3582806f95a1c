import type { PageDef } from '../../app/pages';

/** The knowledge graph's page (the manifest's `/empire/graph` uiPath). */
export const graphPages: PageDef[] = [
  { path: '/empire/graph', title: 'Query', section: 'Graph', anyScope: ['read:empire'], load: () => import('./GraphQuery') },
];
