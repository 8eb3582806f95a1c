import type { PageDef } from '../../app/pages';

/**
 * The chaos pages (the manifest's `/chaos…` uiPaths): the experiments with register, pause,
 * resume, retire and run now; the runs with their measured recovery; the freeze switch (writes
 * take `write:alerts`).
 */
export const chaosPages: PageDef[] = [
  { path: '/chaos/experiments', title: 'Experiments', section: 'Chaos', anyScope: ['read:empire'], load: () => import('./Experiments') },
  { path: '/chaos/runs', title: 'Runs', section: 'Chaos', anyScope: ['read:empire'], load: () => import('./Runs') },
  { path: '/chaos/freeze', title: 'Freeze', section: 'Chaos', anyScope: ['read:empire'], load: () => import('./Freeze') },
];
