import type { PageDef } from '../app/pages';
import { agentApiPages } from './agent-api';
import { docsPages } from './docs';
import { honeypotPages } from './honeypot';
import { opsPages } from './ops';
import { settingsPages } from './settings';

/**
 * The console's route table: every domain's pages, in navigation order. A new domain adds its
 * folder under pages/ with an index.ts listing its pages, and one line here.
 */
export const PAGES: readonly PageDef[] = [
  ...honeypotPages,
  ...agentApiPages,
  ...opsPages,
  ...settingsPages,
  ...docsPages,
];
