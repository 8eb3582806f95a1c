import type { BackupService } from '../service.ts';
import type { RestoreRehearsal } from './service.ts';

/** The backups service as the drill and the bridge verify endpoint use it (a real restore into a scratch database). */
export function rehearsalOf(backups: BackupService): RestoreRehearsal {
  return {
    database: backups.database,
    async latestSnapshot(database) {
      const snapshot = await backups.latestSnapshot(database);
      return snapshot === null ? null : { id: snapshot.id, takenAt: new Date(snapshot.takenAt) };
    },
    async takeSnapshot() {
      const snapshot = await backups.takeSnapshot({ source: 'provider', call: null });
      return { id: snapshot.id, takenAt: new Date(snapshot.takenAt) };
    },
    async verifySnapshot(snapshotId, call) {
      const verification = await backups.verifySnapshot(snapshotId, call === null ? { trigger: 'job' } : { call, trigger: 'manual' });
      return { id: verification.id, outcome: verification.outcome, durationMs: verification.durationMs, errorText: verification.errorText };
    },
  };
}
