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
      const snapshot = await backups.takeSnapshot({ source: 'provider', call: null, wait: true });
      return { id: snapshot.id, takenAt: new Date(snapshot.takenAt) };
    },
    async verifySnapshot(snapshotId, call, trigger = call === null ? 'job' : 'manual') {
      // The drill waits for the backup turn; a bridge call holds it already or is refused (409).
      const verification = await backups.verifySnapshot(snapshotId, { call, trigger, wait: call === null });
      return { id: verification.id, outcome: verification.outcome, durationMs: verification.durationMs, errorText: verification.errorText };
    },
    exclusive: (work, options) => backups.exclusive(work, options),
    lastVerifiedAt: (trigger) => backups.lastVerifiedAt(trigger),
  };
}
