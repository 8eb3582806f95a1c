import { DataTable } from '../../../components';
import type { DigestTuple } from './api';

/** Digest tuples, one row per region: migration, graph and compliance digests in full. */
export function TupleTable({ tuples, caption, current }: { tuples: readonly DigestTuple[]; caption: string; current?: string }) {
  return (
    <DataTable
      caption={caption}
      rows={tuples}
      rowKey={(t) => t.regionKey}
      columns={[
        { key: 'regionKey', label: 'Region', sortValue: (t) => t.regionKey, render: (t) => (t.regionKey === current ? `${t.regionKey} (this deployment)` : t.regionKey) },
        { key: 'migrationDigest', label: 'Migration digest', render: (t) => <code className="hash">{t.migrationDigest}</code> },
        { key: 'graphDigest', label: 'Graph digest', render: (t) => <code className="hash">{t.graphDigest}</code> },
        { key: 'complianceDigest', label: 'Compliance digest', render: (t) => <code className="hash">{t.complianceDigest}</code> },
      ]}
    />
  );
}
