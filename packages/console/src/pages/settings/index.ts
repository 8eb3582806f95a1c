import type { PageDef } from '../../app/pages';

/** Settings: your account and passkeys, API tokens, operators, integrations (the manifest's `/settings/…` uiPaths). */
export const settingsPages: PageDef[] = [
  { path: '/settings/account', title: 'Account', section: 'Settings', anyScope: [], load: () => import('./Account') },
  { path: '/settings/tokens', title: 'API tokens', section: 'Settings', anyScope: ['write:tokens'], load: () => import('./Tokens') },
  { path: '/settings/operators', title: 'Operators', section: 'Settings', anyScope: ['write:tokens'], load: () => import('./Operators') },
  { path: '/settings/integrations', title: 'Integrations', section: 'Settings', anyScope: ['read:alerts', 'write:alerts'], load: () => import('./Integrations') },
];
