import { Type } from '@sinclair/typebox';
import { FANOUT_REASON_NAMES } from '../../platform/bridge/fanout.ts';
import { StringEnum } from '../../platform/http/registry.ts';

/** Response shapes the federation endpoints share (docs/federation/README.md). */

export const FEDERATION_TAG = 'federation';
export const REGIONS_UI_PATH = '/federation/regions';
export const OVERVIEW_UI_PATH = '/federation/overview';
export const generatedAt = '2026-11-24T08:00:00.000Z';

const Hex64 = (description: string) => Type.String({ pattern: '^[0-9a-f]{64}$', description });

export const DigestTupleSchema = Type.Object(
  {
    regionKey: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' }),
    migrationDigest: Hex64('SHA-256 over the applied migrations\' hashes, in order.'),
    graphDigest: Hex64('The latest completed graph materialisation\'s stored digest (a fixed constant before the first).'),
    complianceDigest: Hex64('SHA-256 of the canonical JSON of every control\'s outcome in force, by framework and control id.'),
  },
  { additionalProperties: false },
);

export const FailedRegionSchema = Type.Object({
  region: Type.String(),
  reason: StringEnum(FANOUT_REASON_NAMES, { description: 'A fixed reason (docs/federation/README.md, "Bridge"); the region\'s own words go to the log only.' }),
});

export const MigrationParitySchema = StringEnum(['drifted', 'matched'] as const);

export const exampleTuples = [
  {
    regionKey: 'eu-west',
    migrationDigest: '5d41402abc4b2a76b9719d911017c592ae1b6f1c9e3a8f0d2c4b6a8e0f1d3c5b',
    graphDigest: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    complianceDigest: '2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae',
  },
  {
    regionKey: 'us-east',
    migrationDigest: '5d41402abc4b2a76b9719d911017c592ae1b6f1c9e3a8f0d2c4b6a8e0f1d3c5b',
    graphDigest: 'fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9',
    complianceDigest: '2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae',
  },
];
export const exampleFederationDigest = 'b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c';
