import type { PageDef } from '../../app/pages';

/** The public agent (bait) API: topics and keys (the manifest's `/agent-api` uiPath). */
export const agentApiPages: PageDef[] = [{ path: '/agent-api', title: 'Topics and keys', section: 'Agent API', anyScope: [], load: () => import('./AgentApi') }];
