import { createHash } from 'node:crypto';

/**
 * JA4 from a TLS ClientHello, for a router that terminates TLS itself (FoxIO, "JA4: TLS Client
 * Fingerprinting", technical_details/JA4.md). Pure: bytes in, a reading out.
 *
 * `readClientHello` takes the first bytes a client sent on a connection and says whether they
 * hold a whole ClientHello yet (`more`), are not TLS (`not-tls`), or gives the hello's fields;
 * `ja4Of` turns the fields into the fingerprint. A ClientHello may be split across several TLS
 * records: their handshake bytes are joined. GREASE values are left out everywhere.
 */

export interface ClientHello {
  /** The legacy version field (0x0303 for TLS 1.2 and 1.3). */
  legacyVersion: number;
  ciphers: number[];
  /** Extension types in the order sent. */
  extensions: number[];
  /** supported_versions (0x002b), if sent. */
  supportedVersions: number[] | null;
  /** The first ALPN protocol's bytes; null without ALPN. */
  firstAlpn: Uint8Array | null;
  /** signature_algorithms (0x000d) in the order sent; empty when not sent. */
  signatureAlgorithms: number[];
}

export type HelloReading = { state: 'more' } | { state: 'not-tls'; why: string } | { state: 'hello'; hello: ClientHello };

/** A ClientHello longer than this is not read (the largest seen, with post-quantum key shares, are under 2 KiB). */
export const MAX_HELLO_BYTES = 16 * 1024;

const HANDSHAKE_RECORD = 0x16;
const CLIENT_HELLO = 0x01;
const SNI = 0x0000;
const ALPN = 0x0010;
const SIGNATURE_ALGORITHMS = 0x000d;
const SUPPORTED_VERSIONS = 0x002b;

/** GREASE (RFC 8701): 0x0a0a, 0x1a1a, … 0xfafa. */
export const isGrease = (value: number) => (value & 0x0f0f) === 0x0a0a && value >> 8 === (value & 0xff);

/** The handshake bytes of the leading TLS records, joined; `more` until a whole ClientHello is there. */
export function readClientHello(bytes: Uint8Array): HelloReading {
  const handshake: number[] = [];
  let offset = 0;
  let needed: number | null = null;
  while (needed === null || handshake.length < needed) {
    if (bytes.length < offset + 5) return { state: 'more' };
    if (bytes[offset] !== HANDSHAKE_RECORD) return { state: 'not-tls', why: offset === 0 ? 'not a TLS handshake record' : 'a record other than handshake before the hello ended' };
    if (bytes[offset + 1] !== 0x03) return { state: 'not-tls', why: 'not a TLS record version' };
    const length = ((bytes[offset + 3] as number) << 8) | (bytes[offset + 4] as number);
    if (length === 0) return { state: 'not-tls', why: 'an empty record' };
    if (bytes.length < offset + 5 + length) return { state: 'more' };
    for (let i = 0; i < length; i += 1) handshake.push(bytes[offset + 5 + i] as number);
    offset += 5 + length;
    if (needed === null && handshake.length >= 4) {
      if (handshake[0] !== CLIENT_HELLO) return { state: 'not-tls', why: 'the first handshake message is not a ClientHello' };
      needed = 4 + (((handshake[1] as number) << 16) | ((handshake[2] as number) << 8) | (handshake[3] as number));
      if (needed > MAX_HELLO_BYTES) return { state: 'not-tls', why: 'a ClientHello larger than the router reads' };
    }
  }
  const hello = parseHello(Uint8Array.from(handshake.slice(4, needed)));
  return hello === null ? { state: 'not-tls', why: 'a malformed ClientHello' } : { state: 'hello', hello };
}

/** The ClientHello body (after the 4-byte handshake header); null when malformed. */
function parseHello(body: Uint8Array): ClientHello | null {
  const reader = new Reader(body);
  const legacyVersion = reader.u16();
  reader.skip(32); // random
  reader.skip(reader.u8()); // legacy session id
  const cipherBytes = reader.u16();
  if (cipherBytes % 2 !== 0) return null;
  const ciphers: number[] = [];
  for (let i = 0; i < cipherBytes / 2; i += 1) ciphers.push(reader.u16());
  reader.skip(reader.u8()); // compression methods
  const hello: ClientHello = { legacyVersion, ciphers, extensions: [], supportedVersions: null, firstAlpn: null, signatureAlgorithms: [] };
  if (reader.failed) return null;
  if (reader.left === 0) return hello; // no extensions at all (before TLS 1.2, allowed)
  const end = reader.u16() + reader.position;
  while (!reader.failed && reader.position < end) {
    const type = reader.u16();
    const data = new Reader(reader.take(reader.u16()));
    hello.extensions.push(type);
    if (type === SUPPORTED_VERSIONS) {
      const count = data.u8() / 2;
      hello.supportedVersions = Array.from({ length: count }, () => data.u16());
    } else if (type === SIGNATURE_ALGORITHMS) {
      const count = data.u16() / 2;
      hello.signatureAlgorithms = Array.from({ length: count }, () => data.u16());
    } else if (type === ALPN) {
      const listBytes = data.u16();
      hello.firstAlpn = listBytes === 0 ? new Uint8Array() : data.take(data.u8());
    }
    if (data.failed) return null;
  }
  return reader.failed || reader.position !== end ? null : hello;
}

class Reader {
  position = 0;
  failed = false;
  constructor(private readonly bytes: Uint8Array) {}
  get left(): number {
    return this.bytes.length - this.position;
  }
  take(count: number): Uint8Array {
    if (this.failed || count > this.left) {
      this.failed = true;
      return new Uint8Array();
    }
    this.position += count;
    return this.bytes.subarray(this.position - count, this.position);
  }
  skip(count: number): void {
    this.take(count);
  }
  u8(): number {
    const [value] = this.take(1);
    return value ?? 0;
  }
  u16(): number {
    const pair = this.take(2);
    return pair.length === 2 ? ((pair[0] as number) << 8) | (pair[1] as number) : 0;
  }
}

const VERSION_CODES: Record<number, string> = { 0x0304: '13', 0x0303: '12', 0x0302: '11', 0x0301: '10', 0x0300: 's3', 0x0002: 's2', 0xfeff: 'd1', 0xfefd: 'd2', 0xfefc: 'd3' };
const hex4 = (value: number) => value.toString(16).padStart(4, '0');
const count2 = (count: number) => String(Math.min(count, 99)).padStart(2, '0');
const hash12 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);
const isAlphanumeric = (byte: number) => (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a);

/** The two ALPN characters: the first and last of the first value, or of its hex when either byte is not alphanumeric. */
export function alpnCode(first: Uint8Array | null): string {
  if (first === null || first.length === 0) return '00';
  const head = first[0] as number;
  const tail = first[first.length - 1] as number;
  if (isAlphanumeric(head) && isAlphanumeric(tail)) return String.fromCharCode(head, tail);
  const hex = Buffer.from(first).toString('hex');
  return `${hex[0]}${hex[hex.length - 1]}`;
}

/** JA4 over TCP (`t…`) of a ClientHello. */
export function ja4Of(hello: ClientHello): string {
  const ciphers = hello.ciphers.filter((c) => !isGrease(c));
  const extensions = hello.extensions.filter((e) => !isGrease(e));
  const offered = (hello.supportedVersions ?? []).filter((v) => !isGrease(v));
  const version = offered.length > 0 ? Math.max(...offered) : hello.legacyVersion;
  const a = `t${VERSION_CODES[version] ?? '00'}${extensions.includes(SNI) ? 'd' : 'i'}${count2(ciphers.length)}${count2(extensions.length)}${alpnCode(hello.firstAlpn)}`;
  const b = ciphers.length === 0 ? '000000000000' : hash12(ciphers.map(hex4).sort().join(','));
  const hashed = extensions.filter((e) => e !== SNI && e !== ALPN).map(hex4).sort();
  const algorithms = hello.signatureAlgorithms.filter((s) => !isGrease(s)).map(hex4);
  const c = hashed.length === 0 ? '000000000000' : hash12(algorithms.length === 0 ? hashed.join(',') : `${hashed.join(',')}_${algorithms.join(',')}`);
  return `${a}_${b}_${c}`;
}
