import { describe, expect, it } from 'vitest';
import { lineId } from './position.ts';
import { clfTime, eventOf, unescapeLogged } from './record.ts';

describe('eventOf', () => {
  it('splits path and query, upper-cases the method, keeps only recorded headers and a well-formed JA4', () => {
    const event = eventOf(
      { ip: '::ffff:192.0.2.4', method: 'get', target: '/q/a?b=c', ua: 'ua', referer: 'https://x/', ja4: 't13d_a_b', ts: '2026-11-29T00:00:00.000Z', headers: { 'accept-language': 'en', cookie: 'secret', 'x-ja4': 't13d_a_b' } },
      'log-1',
    );
    expect(event).toEqual({ id: 'log-1', method: 'GET', path: '/q/a', query: 'b=c', ip: '192.0.2.4', ua: 'ua', referer: 'https://x/', ja4: 't13d_a_b', ts: '2026-11-29T00:00:00.000Z', headers: { 'accept-language': 'en' } });
  });

  it('reads an absolute request target as its path, and drops a JA4 that is not one', () => {
    expect(eventOf({ ip: '2001:db8::1', method: 'GET', target: 'http://bait.example/x?y', ja4: 'not a ja4!' }, 'i')).toEqual({ id: 'i', method: 'GET', path: '/x', query: 'y', ip: '2001:db8::1', ua: '' });
  });

  it('cuts what is too long and removes U+0000', () => {
    const event = eventOf({ ip: '192.0.2.1', method: 'GET', target: `/${'a'.repeat(3000)}\u0000`, ua: 'u'.repeat(3000) }, 'i');
    expect(event?.path).toHaveLength(2048);
    expect(event?.ua).toHaveLength(2048);
  });

  it.each([
    ['an address that is not one', { ip: 'unknown', method: 'GET', target: '/' }],
    ['a method the ingest refuses', { ip: '192.0.2.1', method: 'M-SEARCH', target: '/' }],
    ['a target that is no path', { ip: '192.0.2.1', method: 'GET', target: '*' }],
  ])('is null for %s', (_, request) => {
    expect(eventOf(request, 'i')).toBeNull();
  });
});

describe('log times and escapes', () => {
  it('reads $time_local with its offset, and refuses what is not one', () => {
    expect(clfTime('10/Oct/2000:13:55:36 -0700')).toBe('2000-10-10T20:55:36.000Z');
    expect(clfTime('10/Foo/2000:13:55:36 -0700')).toBeNull();
    expect(clfTime('yesterday')).toBeNull();
  });

  it('unescapes byte sequences as UTF-8 and leaves a lone backslash', () => {
    expect(unescapeLogged('\\xE2\\x9C\\x93 ok\\')).toBe('✓ ok\\');
    expect(unescapeLogged('-')).toBe('');
    expect(unescapeLogged('a\\tb\\nc')).toBe('a\tb\nc');
  });
});

describe('lineId', () => {
  const file = { dev: '2049', ino: '1234', head: 'a'.repeat(64) };
  it('is the same for the same line at the same place, and fits the ingest (at most 128 characters)', () => {
    const id = lineId(file, 100, 'line');
    expect(id).toBe(lineId({ ...file }, 100, 'line'));
    expect(id).toMatch(/^log-[0-9a-f]{64}$/);
    // The device number can change across reboots while the file stays.
    const renumbered: { dev: string; ino: string; head: string } = { ...file, dev: '66' };
    expect(lineId(renumbered, 100, 'line')).toBe(id);
  });
  it('differs for the same text at another offset, in another file, or after the file was truncated (another first line)', () => {
    const id = lineId(file, 100, 'line');
    expect(lineId(file, 200, 'line')).not.toBe(id);
    expect(lineId({ ...file, ino: '1235' }, 100, 'line')).not.toBe(id);
    expect(lineId({ ...file, head: 'b'.repeat(64) }, 100, 'line')).not.toBe(id);
    expect(lineId(file, 100, 'line2')).not.toBe(id);
  });
});
