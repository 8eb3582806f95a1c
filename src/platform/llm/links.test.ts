import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dropForeignLinks, LINK_REMOVED, linkOriginOf } from './links.ts';

// Links in model output are dropped unless they point at this service (docs/triage/README.md, "Untrusted input").

const ORIGIN = 'https://observatory.example.com';
const drop = (text: string, origin: string | null = ORIGIN) => dropForeignLinks(text, origin).text;

describe('dropForeignLinks', () => {
  it('drops links of every spelling that leave the service', () => {
    for (const link of [
      'https://evil.example/login',
      'http://evil.example',
      'HTTPS://EVIL.EXAMPLE/a?b=c#d',
      'hxxps://evil.example/login',
      'ftp://files.evil.example/x',
      'javascript:alert(document.cookie);x=1',
      'data:text/html;base64,PHNjcmlwdD4=',
      'mailto:help@evil.example',
      '//evil.example/login',
      'www.evil.example',
      'www.evil.example/login',
      'evil.example/login',
      'evil.example:8443/x',
      'login.évil.example/reset',
      'https://observatory.example.com@evil.example/',
      'https://observatory.example.com.evil.example/',
      'http://observatory.example.com/',
      'https://observatory.example.com:444/',
    ]) {
      expect(drop(`Go to ${link} now.`), link).toBe(`Go to ${LINK_REMOVED} now.`);
    }
  });

  it('keeps links to the service itself, in any case and with or without a scheme', () => {
    for (const link of [`${ORIGIN}/v1/empire/triage/proposals`, 'HTTPS://Observatory.Example.com/ui', '//observatory.example.com/ui', 'observatory.example.com/ui/triage', `${ORIGIN}`]) {
      expect(drop(`See ${link}.`), link).toBe(`See ${link}.`);
    }
  });

  it('leaves closing punctuation to the sentence, and counts what it dropped', () => {
    expect(dropForeignLinks('(see https://evil.example/a), then https://evil.example/b.', ORIGIN)).toEqual({ text: `(see ${LINK_REMOVED}), then ${LINK_REMOVED}.`, dropped: 2 });
  });

  it('leaves text without links alone: event types, versions, times, paths, numbers', () => {
    const text = 'crawl.page and honeypot.LIAR rose 3.5× at 10:30:00 on 2026-11-26; see docs/triage/README.md and /v1/empire, v1.2.0, 203.0.113.50.';
    expect(dropForeignLinks(text, ORIGIN)).toEqual({ text, dropped: 0 });
  });

  it('drops every link when no origin is allowed', () => {
    expect(drop(`${ORIGIN}/ui`, null)).toBe(LINK_REMOVED);
  });

  it('never leaves a foreign http(s) link behind (property)', () => {
    const host = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}\.[a-z]{2,6}$/).filter((h) => h !== 'observatory.example.com');
    fc.assert(
      fc.property(fc.string(), host, fc.constantFrom('http://', 'https://', '//', 'www.', ''), fc.stringMatching(/^\/[a-z0-9/._-]{0,20}$/), fc.string(), (before, h, scheme, path, after) => {
        const out = drop(`${before} ${scheme}${h}${path} ${after}`);
        expect(out).not.toContain(` ${scheme}${h}`);
      }),
    );
  });
});

describe('linkOriginOf', () => {
  it('is the origin of the public URL', () => {
    expect(linkOriginOf('https://observatory.example.com/base/')).toBe(ORIGIN);
    expect(linkOriginOf('http://localhost:3000')).toBe('http://localhost:3000');
  });
});
