import type { PageDef } from '../app/pages';
import { agentApiPages } from './agent-api';
import { analyticsPages } from './analytics';
import { auditPages } from './audit';
import { backupPages } from './backups';
import { chaosPages } from './chaos';
import { compliancePages } from './compliance';
import { costPages } from './cost';
import { docsPages } from './docs';
import { empirePages } from './empire';
import { federationPages } from './federation';
import { graphPages } from './graph';
import { honeypotPages } from './honeypot';
import { opsPages } from './ops';
import { settingsPages } from './settings';
import { triagePages } from './triage';
import { trustPages } from './trust';

/**
 * The console's route table: every domain's pages, in navigation order. A new domain adds its
 * folder under pages/ with an index.ts listing its pages, and one line here.
 */
export const PAGES: readonly PageDef[] = [
  ...honeypotPages,
  ...empirePages,
  ...graphPages,
  ...triagePages,
  ...analyticsPages,
  ...costPages,
  ...backupPages,
  ...auditPages,
  ...compliancePages,
  ...federationPages,
  ...trustPages,
  ...chaosPages,
  ...agentApiPages,
  ...opsPages,
  ...settingsPages,
  ...docsPages,
];
