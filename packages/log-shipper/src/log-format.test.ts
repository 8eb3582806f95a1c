import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { caddyParser } from './caddy.ts';
import { apacheLogFormat, COMBINED, compileLogFormat, tokenizeLogFormat } from './log-format.ts';
import { parserFor } from './shipper.ts';

const combined = parserFor({ format: 'combined' });

describe('the combined format (nginx and Apache)', () => {
  it('reads every field of a plain line', () => {
    const line = '203.0.113.7 - - [29/Nov/2026:01:02:03 +0100] "GET /honeypot/topics/a?x=1&y=2 HTTP/1.1" 200 512 "https://example.org/" "Mozilla/5.0 (compatible; GPTBot/1.1)"';
    expect(combined(line)).toEqual({
      ip: '203.0.113.7',
      ts: '2026-11-29T00:02:03.000Z',
      method: 'GET',
      target: '/honeypot/topics/a?x=1&y=2',
      status: 200,
      ua: 'Mozilla/5.0 (compatible; GPTBot/1.1)',
      referer: 'https://example.org/',
    });
  });

  it('reads an IPv6 client, a user name, "-" for an empty referer and body size, and HTTP/2', () => {
    const line = '2001:db8::1 - alice [01/Jan/2026:23:59:59 -0500] "HEAD /q/x HTTP/2.0" 304 - "-" "curl/8.0"';
    expect(combined(line)).toEqual({ ip: '2001:db8::1', ts: '2026-01-02T04:59:59.000Z', method: 'HEAD', target: '/q/x', status: 304, ua: 'curl/8.0' });
  });

  it("unescapes nginx's \\xHH and Apache's \\\" inside quoted fields", () => {
    const nginx = '198.51.100.1 - - [29/Nov/2026:00:00:00 +0000] "GET /a\\x22b HTTP/1.1" 404 0 "-" "Bot \\x22quoted\\x22 caf\\xC3\\xA9"';
    expect(combined(nginx)).toMatchObject({ target: '/a"b', ua: 'Bot "quoted" café' });
    const apache = '198.51.100.1 - - [29/Nov/2026:00:00:00 +0000] "GET /x HTTP/1.1" 200 10 "-" "Agent \\"with\\" quotes \\\\ and more"';
    expect(combined(apache)).toMatchObject({ ua: 'Agent "with" quotes \\ and more' });
  });

  it('allows fields after the combined ones (nginx "main" adds X-Forwarded-For)', () => {
    const line = '192.0.2.9 - - [29/Nov/2026:00:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "ua" "10.0.0.1"';
    expect(combined(line)).toMatchObject({ ip: '192.0.2.9', target: '/', ua: 'ua' });
  });

  it.each([
    ['an empty line', ''],
    ['a partial line', '192.0.2.9 - - [29/Nov/2026:00:00:00 +0000] "GET / HTTP/1.1'],
    ['a TLS handshake sent to the HTTP port', '192.0.2.9 - - [29/Nov/2026:00:00:00 +0000] "\\x16\\x03\\x01\\x02\\x00\\x01" 400 157 "-" "-"'],
    ['a request line of "-" (the client closed first)', '192.0.2.9 - - [29/Nov/2026:00:00:00 +0000] "-" 400 0 "-" "-"'],
    ['a JSON line', '{"ts":1,"request":{}}'],
    ['an error log line', '2026/11/29 00:00:00 [error] 12#12: *1 open() "/x" failed (2: No such file or directory)'],
  ])('gives null for %s', (_, line) => {
    expect(combined(line)).toBeNull();
  });
});

describe('an nginx log_format with JA4', () => {
  const format = '$remote_addr [$time_iso8601] "$request_method $request_uri" $status "$http_user_agent" ja4=$http_x_ja4 lang="$http_accept_language" t=$request_time';
  const parse = compileLogFormat(format);

  it('maps named variables to fields: the JA4 header, a recorded header, an ISO time', () => {
    const line = '2001:db8::5 [2026-11-29T01:02:03+00:00] "POST /agents/x?y=1" 201 "ClaudeBot/1.0" ja4=t13d1516h2_8daaf6152771_e5627efa2ab1 lang="en-GB,en;q=0.9" t=0.004';
    expect(parse(line)).toEqual({
      ip: '2001:db8::5',
      ts: '2026-11-29T01:02:03.000Z',
      method: 'POST',
      target: '/agents/x?y=1',
      status: 201,
      ua: 'ClaudeBot/1.0',
      ja4: 't13d1516h2_8daaf6152771_e5627efa2ab1',
      headers: { 'x-ja4': 't13d1516h2_8daaf6152771_e5627efa2ab1', 'accept-language': 'en-GB,en;q=0.9' },
    });
  });

  it('reads "-" as no JA4', () => {
    expect(parse('192.0.2.1 [2026-11-29T01:02:03+00:00] "GET /" 200 "ua" ja4=- lang="-" t=0.000')).not.toHaveProperty('ja4');
  });

  it('prefers $ja4 (a module) when the format logs several', () => {
    const both = compileLogFormat('$remote_addr "$request" $http_x_ja4 $ja4');
    expect(both('192.0.2.1 "GET / HTTP/1.1" from_header from_module')).toMatchObject({ ja4: 'from_module' });
  });

  it('splits $uri and $args, $msec times, and ${braced} variables', () => {
    const parse2 = compileLogFormat('${remote_addr}|$msec|$request_method|$uri|$args|$status');
    expect(parse2('192.0.2.1|1795914123.456|GET|/q/a|b=1|200')).toEqual({ ip: '192.0.2.1', ts: '2026-11-29T01:02:03.456Z', method: 'GET', target: '/q/a?b=1', status: 200 });
    expect(parse2('192.0.2.1|1795914123.456|GET|/q/a||200')).toMatchObject({ target: '/q/a' });
  });

  it('refuses a format without the client address or the request, saying which', () => {
    expect(() => compileLogFormat('$time_local "$request"')).toThrow(/remote_addr/);
    expect(() => compileLogFormat('$remote_addr $status')).toThrow(/\$request/);
    expect(() => parserFor({ format: 'nginx' })).toThrow(/log format string/);
  });

  it('tokenizes literals and variables', () => {
    expect(tokenizeLogFormat('a $b-${c}d')).toEqual([
      { kind: 'literal', text: 'a ' },
      { kind: 'variable', name: 'b' },
      { kind: 'literal', text: '-' },
      { kind: 'variable', name: 'c' },
      { kind: 'literal', text: 'd' },
    ]);
  });

  it('gives null for a line of another format, with the whole line anchored', () => {
    expect(compileLogFormat(COMBINED)('192.0.2.9 - - [29/Nov/2026:00:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "ua" extra')).toBeNull();
  });
});

describe('an Apache LogFormat', () => {
  it('translates to the nginx equivalent', () => {
    expect(apacheLogFormat('%h %l %u %t \\"%r\\" %>s %b \\"%{Referer}i\\" \\"%{User-agent}i\\"')).toBe(
      '$remote_addr $remote_logname $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"',
    );
    expect(apacheLogFormat('%a %{JA4}e 100%%')).toBe('$remote_addr $ja4 100%');
  });

  it('parses lines with an environment variable as the JA4', () => {
    const parse = parserFor({ format: 'apache', logFormat: '%h %t \\"%r\\" %>s \\"%{User-Agent}i\\" %{JA4_FINGERPRINT}e' });
    expect(parse('192.0.2.3 [29/Nov/2026:00:00:00 +0000] "GET /x HTTP/1.1" 200 "UA \\"q\\"" t13d_abc_def')).toMatchObject({ ip: '192.0.2.3', ua: 'UA "q"', ja4: 't13d_abc_def' });
  });
});

describe("Caddy's JSON access log", () => {
  const parse = caddyParser();
  const entry = {
    level: 'info',
    ts: 1795914123.5,
    logger: 'http.log.access.log0',
    msg: 'handled request',
    request: {
      remote_ip: '10.0.0.2',
      remote_port: '41342',
      client_ip: '2001:db8::7',
      proto: 'HTTP/2.0',
      method: 'GET',
      host: 'bait.example',
      uri: '/honeypot/topics/b?z=9',
      headers: { 'User-Agent': ['PerplexityBot/1.0'], Accept: ['text/html', 'application/xhtml+xml'], 'X-Ja4': ['t13d_aaa_bbb'], Referer: ['https://r.example/'] },
    },
    status: 200,
  };

  it('reads client_ip, method, uri, headers with lists, ts in seconds and the JA4 header', () => {
    expect(parse(JSON.stringify(entry))).toEqual({
      ip: '2001:db8::7',
      ts: '2026-11-29T01:02:03.500Z',
      method: 'GET',
      target: '/honeypot/topics/b?z=9',
      status: 200,
      ua: 'PerplexityBot/1.0',
      referer: 'https://r.example/',
      ja4: 't13d_aaa_bbb',
      headers: { accept: 'text/html, application/xhtml+xml', 'x-ja4': 't13d_aaa_bbb' },
    });
  });

  it('falls back to remote_ip when there is no client_ip (Caddy before 2.7)', () => {
    const { client_ip: _, ...request } = entry.request;
    expect(parse(JSON.stringify({ ...entry, request }))).toMatchObject({ ip: '10.0.0.2' });
  });

  it.each([
    ['a message of Caddy itself', '{"level":"info","ts":1795914123.5,"msg":"server running"}'],
    ['broken JSON', '{"request": {"remote_ip": "1.2.3.4"'],
    ['a request without a method', '{"request":{"remote_ip":"1.2.3.4","uri":"/"}}'],
    ['a JSON array', '[1,2]'],
    ['plain text', 'hello'],
  ])('gives null for %s', (_, line) => {
    expect(parse(line)).toBeNull();
  });
});

describe("the README's formats", () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const given = [...readme.matchAll(/--format (nginx|apache)[\s\\]*--log-format '([^']+)'/g)].map((m) => ({ format: m[1] as 'nginx' | 'apache', logFormat: m[2] as string }));

  it('gives one nginx and one Apache example, each usable', () => {
    expect(given.map((g) => g.format).sort()).toEqual(['apache', 'nginx']);
  });

  it('reads a line nginx writes with the nginx example, JA4 and Web Bot Auth headers included', () => {
    const parse = parserFor(given.find((g) => g.format === 'nginx') as { format: 'nginx'; logFormat: string });
    const line = '203.0.113.5 - - [29/Nov/2026:00:00:00 +0000] "GET /q/a HTTP/2.0" 200 5 "-" "ClaudeBot/1.0" ja4="t13d_a_b" lang="en" sig="sig1=:abc=:" siginput="sig1=(\\x22@authority\\x22);keyid=\\x22k\\x22"';
    expect(parse(line)).toMatchObject({ ja4: 't13d_a_b', headers: { 'accept-language': 'en', signature: 'sig1=:abc=:', 'signature-input': 'sig1=("@authority");keyid="k"' } });
  });

  it('reads a line Apache writes with the Apache example', () => {
    const parse = parserFor(given.find((g) => g.format === 'apache') as { format: 'apache'; logFormat: string });
    expect(parse('203.0.113.5 - - [29/Nov/2026:00:00:00 +0000] "GET /q/a HTTP/1.1" 200 5 "-" "UA" "t13d_a_b"')).toMatchObject({ ip: '203.0.113.5', ua: 'UA', ja4: 't13d_a_b' });
  });
});
