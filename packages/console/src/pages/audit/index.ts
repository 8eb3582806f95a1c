import type { PageDef } from '../../app/pages';

/** The audit chain page (the manifest's `/audit` uiPath). */
export const auditPages: PageDef[] = [
  { path: '/audit', title: 'Audit chain', section: 'Backups & audit', anyScope: ['read:empire'], load: () => import('./AuditChain') },
];
