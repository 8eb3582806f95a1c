import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';

/**
 * A software WebAuthn authenticator for tests: a P-256 (ES256) key pair, `none` attestation, and
 * the same byte layouts a hardware authenticator produces, so the server verifies real signatures.
 */

// ---------------------------------------------------------------------------------------------
// A minimal CBOR encoder (RFC 8949): unsigned and negative integers, byte strings, text strings,
// arrays and maps. Maps are JS Maps so integer keys (COSE) keep their type and order.
// ---------------------------------------------------------------------------------------------

export type CborValue = number | Uint8Array | string | CborValue[] | Map<number | string, CborValue> | { [key: string]: CborValue };

function head(major: number, length: number): Buffer {
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`CBOR length ${length} is out of range`);
  const m = major << 5;
  if (length < 24) return Buffer.from([m | length]);
  if (length < 0x100) return Buffer.from([m | 24, length]);
  if (length < 0x10000) {
    const b = Buffer.alloc(3);
    b[0] = m | 25;
    b.writeUInt16BE(length, 1);
    return b;
  }
  if (length < 0x100000000) {
    const b = Buffer.alloc(5);
    b[0] = m | 26;
    b.writeUInt32BE(length, 1);
    return b;
  }
  const b = Buffer.alloc(9);
  b[0] = m | 27;
  b.writeBigUInt64BE(BigInt(length), 1);
  return b;
}

export function cborEncode(value: CborValue): Buffer {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new TypeError('this CBOR encoder only writes integers');
    return value >= 0 ? head(0, value) : head(1, -1 - value);
  }
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cborEncode)]);
  const entries: [number | string, CborValue][] = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cborEncode(k), cborEncode(v)])]);
}

// ---------------------------------------------------------------------------------------------

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();

export const FLAG_UP = 0x01;
export const FLAG_UV = 0x04;
export const FLAG_AT = 0x40;

export interface CeremonyOverrides {
  /** The origin written into clientDataJSON; defaults to the authenticator's origin. */
  origin?: string;
  /** The RP ID whose hash goes into authenticatorData; defaults to the authenticator's. */
  rpId?: string;
  /** Override the flags byte (e.g. drop UV). */
  flags?: number;
  /** Override the challenge written into clientDataJSON. */
  challenge?: string;
  /** Override the signature counter (assertions only); the stored counter is not advanced. */
  counter?: number;
}

export class SoftAuthenticator {
  readonly credentialId: Buffer;
  private readonly privateKey: KeyObject;
  private readonly x: Buffer;
  private readonly y: Buffer;
  private counter = 0;
  /** The user handle the RP gave at registration (base64url), returned in assertions. */
  private userHandle: string | null = null;

  constructor(
    readonly rpId: string,
    readonly origin: string,
  ) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    this.privateKey = privateKey;
    this.x = Buffer.from(jwk.x as string, 'base64url');
    this.y = Buffer.from(jwk.y as string, 'base64url');
    this.credentialId = randomBytes(32);
  }

  get id(): string {
    return this.credentialId.toString('base64url');
  }

  get signCount(): number {
    return this.counter;
  }

  /** COSE_Key for an EC2 P-256 ES256 public key. */
  cosePublicKey(): Buffer {
    return cborEncode(
      new Map<number, CborValue>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, this.x],
        [-3, this.y],
      ]),
    );
  }

  private authenticatorData(rpId: string, flags: number, counter: number, attested: Buffer | null): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter, 0);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }), 'utf8');
  }

  /** Answers `navigator.credentials.create(options)` with a `none` attestation. */
  register(
    options: { challenge: string; user?: { id: string } },
    overrides: CeremonyOverrides = {},
  ): RegistrationResponseJSON {
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length, 0);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, this.credentialId, this.cosePublicKey()]);
    const authData = this.authenticatorData(
      overrides.rpId ?? this.rpId,
      overrides.flags ?? FLAG_UP | FLAG_UV | FLAG_AT,
      this.counter,
      attested,
    );
    const attestationObject = cborEncode({ fmt: 'none', attStmt: {}, authData });
    const clientDataJSON = this.clientData('webauthn.create', overrides.challenge ?? options.challenge, overrides.origin ?? this.origin);
    this.userHandle = options.user?.id ?? null;
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        transports: ['internal', 'hybrid'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** Answers `navigator.credentials.get(options)`: signs authenticatorData || sha256(clientDataJSON). */
  authenticate(options: { challenge: string }, overrides: CeremonyOverrides = {}): AuthenticationResponseJSON {
    const counter = overrides.counter ?? ++this.counter;
    const authData = this.authenticatorData(overrides.rpId ?? this.rpId, overrides.flags ?? FLAG_UP | FLAG_UV, counter, null);
    const clientDataJSON = this.clientData('webauthn.get', overrides.challenge ?? options.challenge, overrides.origin ?? this.origin);
    // ECDSA with SHA-256, DER-encoded: what WebAuthn ES256 signatures are.
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), this.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
        ...(this.userHandle ? { userHandle: this.userHandle } : {}),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
