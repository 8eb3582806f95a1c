import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parserFor } from './shipper.ts';

/** How nginx writes a value (`escape=default`): `"`, `\`, control bytes and bytes above 0x7E as `\xHH`. */
const nginxEscape = (value: string) =>
  [...Buffer.from(value, 'utf8')].map((b) => (b < 0x20 || b === 0x22 || b === 0x5c || b > 0x7e ? `\\x${b.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(b))).join('');

/** How Apache writes one: `\"`, `\\`, `\n`, `\t`, other control and non-ASCII bytes as `\xhh`. */
const apacheEscape = (value: string) =>
  [...Buffer.from(value, 'utf8')]
    .map((b) => {
      if (b === 0x22) return '\\"';
      if (b === 0x5c) return '\\\\';
      if (b === 0x0a) return '\\n';
      if (b === 0x09) return '\\t';
      return b < 0x20 || b > 0x7e ? `\\x${b.toString(16).padStart(2, '0')}` : String.fromCharCode(b);
    })
    .join('');

const combined = parserFor({ format: 'combined' });
// Any text but "-" alone, which both servers also write for an empty value.
// Characters the escapes are about, often, and any other printable ASCII.
const unit = fc.oneof(fc.constantFrom('"', '\\', '\n', '\t', '\u0001', '\u007f', 'é', '✓', '😀', ' ', '-', '[', ']'), fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }));
const value = fc.string({ unit, maxLength: 40 }).filter((s) => s !== '-');
const pathPart = fc.stringMatching(/^[A-Za-z0-9._~%!$&'()*+,;=:@/-]{0,40}$/);

describe('escaped values read back as written', () => {
  it.each([
    ['nginx', nginxEscape],
    ['Apache', apacheEscape],
  ])('%s: any User-Agent and referer, quotes, backslashes, control characters and UTF-8 included', (_, escape) => {
    fc.assert(
      fc.property(value, value, pathPart, (ua, referer, rest) => {
        const line = `2001:db8::9 - - [29/Nov/2026:00:00:00 +0000] "GET /${escape(rest)} HTTP/1.1" 200 1 "${escape(referer)}" "${escape(ua)}"`;
        const parsed = combined(line);
        expect(parsed).not.toBeNull();
        expect(parsed?.ua).toBe(ua);
        expect(parsed?.referer ?? '').toBe(referer);
        expect(parsed?.target).toBe(`/${rest}`);
      }),
      { numRuns: 300 },
    );
  });
});
