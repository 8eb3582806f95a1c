import { type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { alsoServedAs } from '../../../platform/http/openapi.ts';
import { defineEndpoint, type Endpoint, IsoDate, type Principal, StringEnum, V1 } from '../../../platform/http/registry.ts';
import type { UrlSigner } from '../../../platform/http/signed-url.ts';
import { COMPLIANCE_TAG, POSTURE_SPANS } from '../frameworks/endpoints.ts';
import { ARTIFACT_KINDS } from './artifacts.ts';
import { BUNDLE_KEEP_DAYS, BUNDLE_KEEP_MAX, type BundleService, type EvidenceLink } from './service.ts';

/** Evidence bundles and the signed download of their files (spec B group 4; docs/compliance/README.md, "Evidence bundles"). */

const generatedAt = '2026-11-28T04:20:00.000Z';
const exampleBundleId = '3f1d2c4b-5a69-4e7f-8a9b-0c1d2e3f4a5b';
const exampleExpires = '1795842900';
const exampleSignature = '5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592';

/** The path of one file of a bundle: what its signature covers. */
export const evidencePath = (bundleId: string, name: string) => `${V1}/compliance/evidence/${bundleId}/${name}`;

/** Absolute signed links under OBSERVATORY_PUBLIC_URL (config.publicUrl). */
export function evidenceLinks(signer: UrlSigner, publicUrl: string): EvidenceLink {
  const base = publicUrl.replace(/\/+$/, '');
  return (bundleId, name) => {
    const path = evidencePath(bundleId, name);
    const { query, expiresAt } = signer.sign(path);
    return { url: `${base}${path}?${new URLSearchParams({ ...query })}`, expiresAt };
  };
}

const exampleUrl = (name: string) => `http://localhost:8080${evidencePath(exampleBundleId, name)}?expires=${exampleExpires}&signature=${exampleSignature}`;

const Artifact = Type.Object({
  kind: StringEnum(ARTIFACT_KINDS, { description: '`json`: the snapshot of the framework; `csv`: one row per control; `pdf`: the summary.' }),
  name: Type.String({ description: 'The file name, `<framework>-snapshot.json`, `<framework>-controls.csv` or `<framework>-summary.pdf`.' }),
  contentType: Type.String(),
  bytes: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the file\'s bytes, hex; the manifest lists the same.' }),
  url: Type.String({ format: 'uri', description: 'A signed link to download the file: anyone holding it may, until `expiresAt`, without a credential.' }),
  expiresAt: IsoDate,
});

const exampleManifest = [
  '# Observatory compliance evidence bundle',
  '# framework: soc2',
  `# bundle: ${exampleBundleId}`,
  '# createdAt: 2026-11-28T04:20:00.000Z',
  '# <sha256>  <name>  <bytes>',
  'a3f5c0e1d2b4968778695a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d  soc2-snapshot.json  14211',
  'b4e6d1f2e3c5a7988a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f  soc2-controls.csv  6204',
  'c5f7e2a3f4d6b8a99b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a  soc2-summary.pdf  9876',
  '',
].join('\n');

const EvidenceParams = Type.Object(
  {
    bundleId: Type.String({ format: 'uuid' }),
    name: Type.String({ pattern: '^[a-z0-9][a-z0-9.-]{0,63}$', description: 'A file name of the bundle (`artifacts[].name` or `manifest.txt`).' }),
  },
  { examples: [{ bundleId: exampleBundleId, name: 'soc2-summary.pdf' }] },
);

const EvidenceQuery = Type.Object(
  {
    expires: Type.String({ pattern: '^[0-9]{1,12}$', description: 'The link\'s expiry, Unix seconds.', examples: [exampleExpires] }),
    signature: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'The link\'s signature, hex.', examples: [exampleSignature] }),
  },
  { examples: [{ expires: exampleExpires, signature: exampleSignature }] },
);

/** Refused to a bound token: a bundle is the posture of every toolset. */
const BOUND = 'A token bound to toolsets is refused (403): a bundle holds the posture of the whole deployment.';

export function bundleEndpoints(bundles: BundleService, signer: UrlSigner): Endpoint[] {
  return [
    defineEndpoint({
      id: 'createComplianceBundle',
      title: 'Make a compliance evidence bundle',
      description:
        'Reads the framework as it stands (every control with the evaluation in force, and its posture) and writes an evidence bundle into the file store the backups use (OBSERVATORY_BACKUP_DIR or the S3 bucket): a JSON snapshot, a CSV with one row per control and a PDF summary, each with its SHA-256, and a manifest (`manifestText`, stored too) listing `<sha256>  <name>  <bytes>` per file, whose own SHA-256 is `manifestSha256`. ' +
        `Each file is downloaded through a signed link (\`url\`, \`manifestUrl\`) good for 15 minutes; ask again for fresh links to a new bundle. Bundles older than ${BUNDLE_KEEP_DAYS} days, and the oldest beyond the newest ${BUNDLE_KEEP_MAX}, are deleted (files and record) when a bundle is made (\`expiredBundles\`). ` +
        `Unknown framework: 404. Files that cannot be stored: 503 bundle-failed, nothing recorded. Audited as compliance.bundle. ${BOUND}`,
      method: 'POST',
      path: `${V1}/compliance/bundle`,
      auth: 'session-or-bearer',
      spansEveryToolset: POSTURE_SPANS,
      scope: 'read:empire',
      tag: COMPLIANCE_TAG,
      kind: 'write',
      uiPath: '/compliance/bundles',
      body: Type.Object(
        { framework: Type.String({ pattern: '^[a-z0-9-]{1,32}$', description: '`soc2` or `iso27001`.' }) },
        { additionalProperties: false, examples: [{ framework: 'soc2' }] },
      ),
      response: {
        schemaId: 'svc-compliance-bundle.v1',
        fields: {
          bundleId: Type.String({ format: 'uuid' }),
          framework: Type.String(),
          createdAt: IsoDate,
          controlCount: Type.Integer({ minimum: 0 }),
          storage: StringEnum(['local', 's3'] as const, { description: 'The store the files went to.' }),
          artifacts: Type.Array(Artifact, { description: 'The JSON snapshot, the CSV of controls and the PDF summary, in manifest order.' }),
          manifestText: Type.String(),
          manifestSha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of manifestText as UTF-8, hex.' }),
          manifestUrl: Type.String({ format: 'uri', description: 'A signed link to the stored manifest (`manifest.txt`), with the artifacts\' expiry.' }),
          expiredBundles: Type.Integer({ minimum: 0, description: 'Older bundles this call deleted.' }),
        },
      },
      errors: [503],
      example: {
        schema: 'svc-compliance-bundle.v1',
        generatedAt,
        bundleId: exampleBundleId,
        framework: 'soc2',
        createdAt: '2026-11-28T04:20:00.000Z',
        controlCount: 13,
        storage: 'local',
        artifacts: [
          { kind: 'json', name: 'soc2-snapshot.json', contentType: 'application/json', bytes: 14211, sha256: 'a3f5c0e1d2b4968778695a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d', url: exampleUrl('soc2-snapshot.json'), expiresAt: '2026-11-28T04:35:00.000Z' },
          { kind: 'csv', name: 'soc2-controls.csv', contentType: 'text/csv; charset=utf-8', bytes: 6204, sha256: 'b4e6d1f2e3c5a7988a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f', url: exampleUrl('soc2-controls.csv'), expiresAt: '2026-11-28T04:35:00.000Z' },
          { kind: 'pdf', name: 'soc2-summary.pdf', contentType: 'application/pdf', bytes: 9876, sha256: 'c5f7e2a3f4d6b8a99b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a', url: exampleUrl('soc2-summary.pdf'), expiresAt: '2026-11-28T04:35:00.000Z' },
        ],
        manifestText: exampleManifest,
        manifestSha256: 'd6a8f3b4a5e7c9baac9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b',
        manifestUrl: exampleUrl('manifest.txt'),
        expiredBundles: 0,
      },
      handler: async ({ body, principal, requestId }) => bundles.create(body.framework, { principal: principal as Principal, requestId }),
    }),
    defineEndpoint<typeof EvidenceParams, typeof EvidenceQuery, TSchema, TProperties, true>({
      id: 'downloadComplianceEvidence',
      title: 'Download a file of an evidence bundle',
      description:
        'The bytes of one file of an evidence bundle, as stored: the JSON snapshot, the CSV, the PDF summary or `manifest.txt`, with its content type, `Content-Disposition: attachment` and `X-Content-SHA256` (the recorded digest; the file is checked against it before it is sent, and a file changed in storage is refused 409 evidence-altered). ' +
        'The link is the credential: `expires` and `signature` as the bundle answer gave them (HMAC-SHA256 of the path and the expiry under a key of the deployment). A changed path, expiry or signature is refused 401 bad-signature, a link past its expiry 401 expired-url; both count toward the address\'s failed-authentication limit. A bearer token or session sent with it is ignored. Unknown or deleted bundle or file: 404.',
      method: 'GET',
      path: `${V1}/compliance/evidence/{bundleId}/{name}`,
      auth: 'signed-url',
      scope: null,
      tag: COMPLIANCE_TAG,
      kind: 'read',
      uiPath: '/compliance/bundles',
      verifyCaller: (request) => signer.verifyCaller(request),
      params: EvidenceParams,
      query: EvidenceQuery,
      response: {
        raw: alsoServedAs(Type.String({ description: 'The PDF summary.' }), {
          'application/json': { schema: { description: 'The JSON snapshot.' } },
          'text/csv': { schema: { type: 'string', description: 'The CSV of controls.' } },
          'text/plain': { schema: { type: 'string', description: 'The manifest.' } },
        }),
        contentType: 'application/pdf',
      },
      errors: [409],
      example: '%PDF-1.3 …',
      handler: async ({ params, reply }) => {
        const file = await bundles.file(params.bundleId, params.name);
        void reply
          .type(file.contentType)
          .header('content-disposition', `attachment; filename="${file.name}"`)
          .header('x-content-sha256', file.sha256)
          .header('x-content-type-options', 'nosniff')
          // The link is a credential: neither a shared cache nor the browser's keeps the answer.
          .header('cache-control', 'private, no-store');
        return file.bytes;
      },
    }),
  ];
}
