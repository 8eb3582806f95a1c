import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  addressRefusal,
  checkOutboundUrl,
  nonPublicKind,
  OutboundFailed,
  OutboundRefused,
  type Resolver,
  safePost,
  systemResolver,
} from './safe-fetch.ts';
import { closedPort, type Receiver, startReceiver } from '../../../test/helpers/http-receiver.ts';

let rx: Receiver;
/** The default allow-list plus the ports the tests use; the receiver's port is added once known. */
const ports = [80, 443, 8080, 8443];
beforeAll(async () => {
  rx = await startReceiver();
  ports.push(rx.port);
});
afterAll(() => rx.close());
beforeEach(() => {
  rx.requests.length = 0;
  rx.respond = () => ({ status: 200 });
});

const strict = { timeoutMs: 2_000, allowPrivate: false, allowedPorts: ports };
const lax = { timeoutMs: 2_000, allowPrivate: true, allowedPorts: ports };

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboundRefused);
  return (error as OutboundRefused).reason;
}

describe('address policy', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.10', 'reserved'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
    ['64:ff9b::7f00:1', 'NAT64'],
    ['2002:7f00:1::', '6to4'],
    ['::7f00:1', 'non-global IPv6'],
  ])('refuses %s (%s)', (address, kind) => {
    expect(nonPublicKind(address)).toBe(kind);
    expect(addressRefusal(address)).toBe(`${address} is not a public address (${kind}; set OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1 to allow non-public addresses)`);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:8.8.8.8', '2a00:1450:4001:82b::200e'])(
    'allows the public address %s',
    (address) => {
      expect(nonPublicKind(address)).toBeNull();
    },
  );
});

describe('checkOutboundUrl', () => {
  it.each([
    ['ftp://example.com/x', 'only http and https URLs are allowed, not ftp'],
    ['file:///etc/passwd', 'only http and https URLs are allowed, not file'],
    ['gopher://example.com/', 'only http and https URLs are allowed, not gopher'],
    ['http://user:pw@example.com/', 'the URL must not carry a user name or password'],
    ['not a url', 'the URL is not an absolute URL'],
  ])('refuses %s even when private addresses are allowed', (url, reason) => {
    expect(() => checkOutboundUrl(url, lax)).toThrow(reason);
  });

  it('normalises numeric IPv4 spellings before checking them', () => {
    for (const url of ['http://2130706433/', 'http://0x7f.1/', 'http://127.1/', 'http://0177.0.0.1/']) {
      expect(() => checkOutboundUrl(url, strict)).toThrow('127.0.0.1 is not a public address (loopback; set OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1 to allow non-public addresses)');
    }
  });

  it('refuses localhost names without asking DNS', () => {
    for (const url of ['http://localhost/', 'http://LOCALHOST./', 'https://api.localhost:8443/x']) {
      expect(() => checkOutboundUrl(url, strict)).toThrow(/is a loopback name \(set OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1 /);
      expect(() => checkOutboundUrl(url, lax)).not.toThrow();
    }
  });

  it('accepts public hosts and literal public addresses', () => {
    expect(checkOutboundUrl('https://hooks.slack.com/services/T/B/x', strict).hostname).toBe('hooks.slack.com');
    expect(checkOutboundUrl('http://93.184.216.34:8080/', strict).port).toBe('8080');
    expect(checkOutboundUrl('http://[2606:2800:220:1::1]/', strict).hostname).toBe('[2606:2800:220:1::1]');
  });
});

describe('safePost refusals (nothing is sent)', () => {
  it.each([
    (port: number) => `http://127.0.0.1:${port}/hook`,
    (port: number) => `http://[::1]:${port}/hook`,
    (port: number) => `http://[::ffff:127.0.0.1]:${port}/hook`,
    (port: number) => `http://localhost:${port}/hook`,
    (port: number) => `http://2130706433:${port}/hook`,
    () => 'http://10.0.0.1/hook',
    () => 'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
    () => 'http://[fd00::1]/hook',
  ])('refuses %#', async (make) => {
    const url = make(rx.port);
    const reason = await refusal(safePost(url, '{}', strict));
    expect(reason).toMatch(/not a public address|loopback name/);
    expect(rx.requests).toHaveLength(0);
  });

  it('refuses a hostname that resolves to a loopback address without naming the address', async () => {
    const resolve: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const reason = await refusal(safePost(`http://internal.example:${rx.port}/hook`, '{}', { ...strict, resolve }));
    expect(reason).toBe('internal.example resolves to an address outbound calls may not reach (set OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1 to allow non-public addresses)');
    expect(rx.requests).toHaveLength(0);
  });

  it.each(['10.20.30.40', '192.168.7.9', '169.254.169.254', 'fd00::abcd', '::ffff:172.16.0.9', '100.64.3.2'])(
    'never names the internal address %s a name resolves to (no DNS mapping through refusals)',
    async (address) => {
      const resolve: Resolver = async () => [{ address, family: address.includes(':') ? 6 : 4 }];
      const error = (await safePost('https://db.corp.example/hook', '{}', { ...strict, resolve }).catch((e: unknown) => e)) as OutboundRefused;
      expect(error).toBeInstanceOf(OutboundRefused);
      expect(error.reason).toBe('db.corp.example resolves to an address outbound calls may not reach (set OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1 to allow non-public addresses)');
      expect(`${error.message} ${error.reason} ${String(error.stack)}`).not.toContain(address);
      // Nor does it say which kind of non-public address it was.
      expect(error.reason).not.toMatch(/loopback|private|link-local|unique-local|carrier|mapped/);
    },
  );

  it('refuses when ANY resolved address is private, even after public ones', async () => {
    const resolve: Resolver = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
      { address: '::ffff:10.0.0.7', family: 6 },
    ];
    const reason = await refusal(safePost('http://mixed.example/hook', '{}', { ...strict, resolve }));
    expect(reason).toBe('mixed.example resolves to an address outbound calls may not reach (set OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1 to allow non-public addresses)');
    expect(reason).not.toContain('10.0.0.7');
    expect(reason).not.toContain('93.184.216.34');
  });

  it('refuses schemes other than http and https even with allowPrivate', async () => {
    await refusal(safePost('file:///etc/passwd', '{}', lax));
    await refusal(safePost('ftp://127.0.0.1/x', '{}', lax));
  });

  it('the default resolver really resolves names (localhost is loopback)', async () => {
    const addresses = await systemResolver('localhost');
    expect(addresses.length).toBeGreaterThan(0);
    for (const a of addresses) expect(nonPublicKind(a.address)).toBe('loopback');
  });
});

describe('outbound ports', () => {
  const defaults = { allowPrivate: false, allowedPorts: [80, 443] };

  it('allows only the allow-listed ports, counting a scheme\'s default port', () => {
    expect(checkOutboundUrl('https://hooks.example/x', defaults).hostname).toBe('hooks.example');
    expect(checkOutboundUrl('http://hooks.example/x', defaults).hostname).toBe('hooks.example');
    expect(checkOutboundUrl('https://hooks.example:443/x', defaults).hostname).toBe('hooks.example');
    for (const [url, port] of [
      ['http://hooks.example:8080/x', 8080],
      ['https://hooks.example:6379/', 6379],
      ['http://93.184.216.34:22/', 22],
      ['https://hooks.example:0/', 0],
    ] as const) {
      expect(() => checkOutboundUrl(url, defaults)).toThrow(
        `port ${port} is not an allowed outbound port (allowed: 80, 443; set OBSERVATORY_OUTBOUND_ALLOWED_PORTS)`,
      );
    }
    expect(checkOutboundUrl('http://hooks.example:8080/x', { allowPrivate: false, allowedPorts: [8080] }).port).toBe('8080');
    // Only the listed ports: listing 8080 takes 80 and 443 away.
    expect(() => checkOutboundUrl('https://hooks.example/x', { allowPrivate: false, allowedPorts: [8080] })).toThrow(/port 443 is not/);
  });

  it('applies even when private addresses are allowed', () => {
    expect(() => checkOutboundUrl('http://127.0.0.1:5432/', { allowPrivate: true, allowedPorts: [80, 443] })).toThrow(/port 5432 is not/);
  });

  it('refuses a port outside the list at send time and sends nothing', async () => {
    const reason = await refusal(safePost(`${rx.origin}/hook`, '{}', { timeoutMs: 2_000, allowPrivate: true, allowedPorts: [80, 443] }));
    expect(reason).toBe(`port ${rx.port} is not an allowed outbound port (allowed: 80, 443; set OBSERVATORY_OUTBOUND_ALLOWED_PORTS)`);
    expect(rx.requests).toHaveLength(0);
    // The same URL with its port listed is sent.
    expect(await safePost(`${rx.origin}/hook`, '{}', { timeoutMs: 2_000, allowPrivate: true, allowedPorts: [rx.port] })).toEqual({ status: 200, ok: true });
  });
});

describe('safePost sends', () => {
  it('posts the body with JSON headers when private addresses are allowed', async () => {
    const result = await safePost(`${rx.origin}/hook?x=1`, '{"text":"hi"}', { ...lax, headers: { 'x-extra': 'yes' } });
    expect(result).toEqual({ status: 200, ok: true });
    expect(rx.requests).toHaveLength(1);
    const [got] = rx.requests;
    expect(got).toMatchObject({ method: 'POST', path: '/hook?x=1', body: '{"text":"hi"}' });
    expect(got?.headers).toMatchObject({
      'content-type': 'application/json',
      'content-length': '13',
      'x-extra': 'yes',
      'user-agent': 'Observatory-Outbound/1',
    });
  });

  it('resolves a name with real DNS when allowed (localhost)', async () => {
    expect(await safePost(`http://localhost:${rx.port}/named`, '{}', lax)).toEqual({ status: 200, ok: true });
    expect(rx.to('/named')).toHaveLength(1);
  });

  it('connects to the address it checked and never resolves again (no DNS rebinding)', async () => {
    const answers = ['127.0.0.1', '10.255.255.1'];
    let calls = 0;
    const resolve: Resolver = async () => [{ address: answers[Math.min(calls++, 1)] as string, family: 4 }];
    const result = await safePost(`http://rebind.invalid:${rx.port}/pinned`, '{}', { ...lax, resolve });
    expect(result.ok).toBe(true);
    expect(calls).toBe(1);
    // The name was kept for the Host header although the connection went to the pinned address.
    expect(rx.to('/pinned')[0]?.headers.host).toBe(`rebind.invalid:${rx.port}`);
  });

  it('reports non-2xx statuses as not ok', async () => {
    rx.respond = () => ({ status: 500 });
    expect(await safePost(`${rx.origin}/err`, '{}', lax)).toEqual({ status: 500, ok: false });
  });

  it('reads the answer only when asked, up to the given size', async () => {
    rx.respond = () => ({ status: 201, body: '{"fine":true}' });
    expect(await safePost(`${rx.origin}/read`, '{}', lax)).toEqual({ status: 201, ok: true });
    const read = await safePost(`${rx.origin}/read`, '{}', { ...lax, readBodyBytes: 13 });
    expect({ ...read, body: read.body?.toString('utf8') }).toEqual({ status: 201, ok: true, body: '{"fine":true}' });
    const error = await safePost(`${rx.origin}/read`, '{}', { ...lax, readBodyBytes: 12 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundFailed);
    expect((error as Error).message).toBe('HTTP 201: the answer is larger than 12 bytes');
  });

  it('does not follow redirects', async () => {
    rx.respond = (r) => (r.path === '/moved' ? { status: 302, headers: { location: '/target' } } : { status: 200 });
    expect(await safePost(`${rx.origin}/moved`, '{}', lax)).toEqual({ status: 302, ok: false });
    expect(rx.requests.map((r) => r.path)).toEqual(['/moved']);
  });

  it('times out a webhook that never answers', async () => {
    rx.respond = () => 'hang';
    const began = Date.now();
    const error = await safePost(`${rx.origin}/slow`, '{}', { ...lax, timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundFailed);
    expect((error as Error).message).toBe('timed out after 300 ms');
    expect(Date.now() - began).toBeLessThan(2_000);
  });

  it('times out a DNS lookup that never answers', async () => {
    const resolve: Resolver = () => new Promise(() => {});
    const error = await safePost('http://never.example/', '{}', { ...strict, timeoutMs: 200, resolve }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundFailed);
    expect((error as Error).message).toBe('timed out after 200 ms');
  });

  it('fails with a network error when nothing listens', async () => {
    const port = await closedPort();
    const error = await safePost(`http://127.0.0.1:${port}/`, '{}', { ...lax, allowedPorts: [port] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundFailed);
    expect((error as Error).message).toContain('ECONNREFUSED');
  });

  it('fails when the name does not resolve', async () => {
    const error = await safePost('http://no-such-host.invalid/', '{}', lax).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundFailed);
    expect((error as Error).message).toMatch(/^could not resolve no-such-host\.invalid/);
  });
});
