import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { alpnCode, isGrease, ja4Of, MAX_HELLO_BYTES, readClientHello } from './client-hello.ts';

/**
 * JA4 from ClientHello bytes, checked against the worked example of FoxIO's specification
 * (technical_details/JA4.md): its cipher list, extension list and signature algorithms give
 * `t13d1516h2_8daaf6152771_e5627efa2ab1`. The hellos are built byte by byte here.
 */

const hash12 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);
const u16 = (value: number) => [value >> 8, value & 0xff];
const withLength16 = (bytes: number[]) => [...u16(bytes.length), ...bytes];
const extension = (type: number, data: number[]) => [...u16(type), ...withLength16(data)];

interface HelloSpec {
  ciphers: number[];
  extensions: Array<[number, number[]]>;
  legacyVersion?: number;
}

function helloBody(spec: HelloSpec): number[] {
  const extensions = spec.extensions.flatMap(([type, data]) => extension(type, data));
  return [
    ...u16(spec.legacyVersion ?? 0x0303),
    ...Array.from({ length: 32 }, (_, i) => i),
    32,
    ...Array.from({ length: 32 }, () => 7),
    ...withLength16(spec.ciphers.flatMap(u16)),
    1,
    0,
    ...withLength16(extensions),
  ];
}

/** The hello as TLS records of at most `recordSize` handshake bytes each. */
function records(spec: HelloSpec, recordSize = 16384): Buffer {
  const body = helloBody(spec);
  const handshake = [0x01, body.length >> 16, (body.length >> 8) & 0xff, body.length & 0xff, ...body];
  const out: number[] = [];
  for (let i = 0; i < handshake.length; i += recordSize) {
    const fragment = handshake.slice(i, i + recordSize);
    out.push(0x16, 0x03, 0x01, ...u16(fragment.length), ...fragment);
  }
  return Buffer.from(out);
}

const sni = (name: string) => withLength16([0, ...withLength16([...Buffer.from(name)])]);
const alpn = (...protocols: string[]) => withLength16(protocols.flatMap((p) => [p.length, ...Buffer.from(p)]));

const EXAMPLE_CIPHERS = [0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035];
const EXAMPLE_SIGNATURES = [0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601];

/** The specification's example as a browser sends it: GREASE first in each list, extensions in its order. */
function example(overrides: Partial<{ signatures: number[] | null; alpn: number[] | null; sni: boolean }> = {}): HelloSpec {
  const signatures = overrides.signatures === undefined ? EXAMPLE_SIGNATURES : overrides.signatures;
  const extensions: Array<[number, number[]]> = [[0x0a0a, []]];
  const order = [0x001b, 0x0000, 0x0033, 0x0010, 0x4469, 0x0017, 0x002d, 0x000d, 0x0005, 0x0023, 0x0012, 0x002b, 0xff01, 0x000b, 0x000a, 0x0015];
  for (const type of order) {
    if (type === 0x0000 && overrides.sni === false) continue;
    if (type === 0x0000) extensions.push([type, sni('example.com')]);
    else if (type === 0x0010) {
      if (overrides.alpn !== null) extensions.push([type, overrides.alpn ?? alpn('h2', 'http/1.1')]);
    } else if (type === 0x000d) {
      if (signatures !== null) extensions.push([type, withLength16([0x2a2a, ...signatures].flatMap(u16))]);
    } else if (type === 0x002b) extensions.push([type, [6, ...[0x7a7a, 0x0304, 0x0303].flatMap(u16)]]);
    else extensions.push([type, []]);
  }
  extensions.push([0xfafa, [0]]);
  return { ciphers: [0x2a2a, ...EXAMPLE_CIPHERS], extensions };
}

const ja4 = (bytes: Uint8Array) => {
  const reading = readClientHello(bytes);
  if (reading.state !== 'hello') throw new Error(`expected a hello, got ${JSON.stringify(reading)}`);
  return ja4Of(reading.hello);
};

describe('ja4Of', () => {
  it('gives the specification example its fingerprint', () => {
    expect(ja4(records(example()))).toBe('t13d1516h2_8daaf6152771_e5627efa2ab1');
  });

  it('hashes the extensions alone when no signature algorithms were sent', () => {
    // The specification's second example: the same extension list, no algorithms, no underscore.
    expect(ja4(records(example({ signatures: [] })))).toBe('t13d1516h2_8daaf6152771_6d807ffa2a79');
    // Without the extension itself, the list (and so the hash) loses 000d too.
    expect(ja4(records(example({ signatures: null })))).toBe(`t13d1515h2_8daaf6152771_${hash12('0005,000a,000b,0012,0015,0017,001b,0023,002b,002d,0033,4469,ff01')}`);
  });

  it('says i without SNI, 00 without ALPN, and keeps both out of the extension hash', () => {
    const plain = ja4(records(example()));
    const noSni = ja4(records(example({ sni: false })));
    const noAlpn = ja4(records(example({ alpn: null })));
    expect(noSni).toBe(`t13i1515h2_${plain.slice(11)}`);
    expect(noAlpn).toBe(`t13d151500_${plain.slice(11)}`);
    expect(ja4(records(example({ alpn: alpn('http/1.1', 'h2') })))).toBe(`t13d1516h1_${plain.slice(11)}`);
    expect(ja4(records(example({ alpn: withLength16([]) })))).toBe(`t13d151600_${plain.slice(11)}`);
  });

  it('takes the version from supported_versions, else the legacy field', () => {
    const tls12 = ja4(records({ legacyVersion: 0x0303, ciphers: [0xc02f], extensions: [[0x000a, []]] }));
    expect(tls12.slice(0, 10)).toBe('t12i010100');
    const tls10 = ja4(records({ legacyVersion: 0x0301, ciphers: [0x002f], extensions: [] }));
    expect(tls10).toBe('t10i010000_' + tls10.slice(11, 23) + '_000000000000');
    expect(ja4(records({ legacyVersion: 0x0999, ciphers: [], extensions: [] }))).toBe('t00i000000_000000000000_000000000000');
  });

  it('caps the counts at 99', () => {
    const many = Array.from({ length: 120 }, (_, i) => 0x0100 + i);
    expect(ja4(records({ ciphers: many, extensions: many.map((type) => [type, []] as [number, number[]]) })).slice(0, 10)).toBe('t12i999900');
  });
});

describe('alpnCode', () => {
  it('follows the specification examples', () => {
    const code = (...bytes: number[]) => alpnCode(Uint8Array.from(bytes));
    expect(code(...Buffer.from('h2'))).toBe('h2');
    expect(code(...Buffer.from('http/1.1'))).toBe('h1');
    expect(code(...Buffer.from('h'))).toBe('hh');
    expect(code(0xab)).toBe('ab');
    expect(code(0x20)).toBe('20');
    expect(code(0xab, 0xcd)).toBe('ad');
    expect(code(0x20, 0x61)).toBe('21');
    expect(code(0x30, 0xab)).toBe('3b');
    expect(code(0x61, 0x20)).toBe('60');
    expect(code(0x30, 0x31, 0xab, 0xcd)).toBe('3d');
    expect(code(0x30, 0xab, 0xcd, 0x31)).toBe('01');
    expect(alpnCode(null)).toBe('00');
    expect(code()).toBe('00');
  });
});

describe('readClientHello', () => {
  it('wants more bytes for every cut-short prefix, and reads the hello once whole', () => {
    const bytes = records(example());
    for (let cut = 0; cut < bytes.length; cut += 7) expect(readClientHello(bytes.subarray(0, cut)).state).toBe('more');
    expect(readClientHello(bytes).state).toBe('hello');
    // Bytes after the hello (a client pipelining) change nothing.
    expect(ja4(Buffer.concat([bytes, Buffer.from([0x14, 0x03, 0x03, 0x00, 0x01, 0x01])]))).toBe('t13d1516h2_8daaf6152771_e5627efa2ab1');
  });

  it('joins a hello split across records', () => {
    const split = records(example(), 50);
    expect(split.length).toBeGreaterThan(records(example()).length + 5 * 3);
    expect(ja4(split)).toBe('t13d1516h2_8daaf6152771_e5627efa2ab1');
  });

  it('says what is not a TLS ClientHello', () => {
    const why = (bytes: Uint8Array) => {
      const reading = readClientHello(bytes);
      return reading.state === 'not-tls' ? reading.why : reading.state;
    };
    expect(why(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'))).toBe('not a TLS handshake record');
    expect(why(Buffer.from([0x16, 0x02, 0x00, 0x00, 0x04, 1, 0, 0, 0]))).toBe('not a TLS record version');
    expect(why(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x00]))).toBe('an empty record');
    expect(why(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x04, 2, 0, 0, 0]))).toBe('the first handshake message is not a ClientHello');
    const huge = MAX_HELLO_BYTES + 1;
    expect(why(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x04, 1, huge >> 16, (huge >> 8) & 0xff, huge & 0xff]))).toBe('a ClientHello larger than the router reads');
    const bytes = records(example(), 50);
    const alert = Buffer.from(bytes);
    alert[55] = 0x15; // the second record is an alert, not handshake
    expect(why(alert)).toBe('a record other than handshake before the hello ended');
    // A hello whose extensions run past its end.
    const body = records({ ciphers: [0x1301], extensions: [[0x000a, [1, 2, 3]]] });
    const truncated = Buffer.from(body);
    truncated[truncated.length - 4] = 0x09; // the extension's length now says 9 of 3 bytes
    expect(why(truncated)).toBe('a malformed ClientHello');
  });
});

describe('isGrease', () => {
  it('knows the sixteen GREASE values and nothing else', () => {
    const grease = Array.from({ length: 0x10000 }, (_, v) => v).filter(isGrease);
    expect(grease).toEqual(Array.from({ length: 16 }, (_, i) => ((i << 4) | 0x0a) * 0x0101));
  });
});
