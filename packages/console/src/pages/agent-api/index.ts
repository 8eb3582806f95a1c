import type { PageDef } from '../../app/pages';

/**
 * The public agent (bait) API: topics and keys (the manifest's `/agent-api` uiPath). Reading topics
 * takes `read:tenants`; the forms take `write:tenants` and `write:tokens`.
 */
export const agentApiPages: PageDef[] = [{ path: '/agent-api', title: 'Topics and keys', section: 'Agent API', anyScope: ['read:tenants', 'write:tenants', 'write:tokens'], load: () => import('./AgentApi') }];
