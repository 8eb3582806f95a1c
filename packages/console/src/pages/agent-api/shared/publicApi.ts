import createClient from 'openapi-fetch';
import type { paths } from '../../../api/schema';

/**
 * The public agent API read as any agent reads it: anonymously. The console's own client would
 * send the operator's token, which this API takes for an agent API key (and refuses), so these
 * calls go through a client with no credential at all. Each one is recorded like any agent's
 * call, under this agent name.
 */
export const publicApi = createClient<paths>({ baseUrl: '', credentials: 'omit' });

export const CONSOLE_AGENT_NAME = 'observatory-console';
