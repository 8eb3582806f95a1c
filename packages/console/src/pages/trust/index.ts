import type { PageDef } from '../../app/pages';

/**
 * The trust pages (the manifest's `/trust…` uiPaths): the snapshot with its dimensions, numbers
 * and score; the drift inbox with scan, acknowledge and resolve (writes take `write:alerts`).
 */
export const trustPages: PageDef[] = [
  { path: '/trust', title: 'Snapshot', section: 'Trust', anyScope: ['read:empire'], load: () => import('./Snapshot') },
  { path: '/trust/drift', title: 'Drift inbox', section: 'Trust', anyScope: ['read:empire'], load: () => import('./Drift') },
];
