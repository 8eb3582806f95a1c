import type { PageDef } from '../../app/pages';

/** The API reference, from the manifest (the manifest's `/docs` uiPath). */
export const docsPages: PageDef[] = [{ path: '/docs', title: 'API reference', section: 'Help', anyScope: [], load: () => import('./Docs') }];
