/**
 * What other domains may use of backups (docs/backups/README.md): compliance and the trust snapshot read
 * snapshot and restore-test evidence and the cross-toolset verification.
 */
export type { BackupsDomain } from './wiring.ts';
