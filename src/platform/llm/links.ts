/**
 * Links in model output (docs/triage/README.md, "Untrusted input"): a model that read hostile data may
 * repeat a link from it (a phishing page dressed as a runbook), and an operator reading a proposal
 * or a postmortem trusts what Observatory shows. So every link in model-written text is dropped
 * unless it points at this service: its origin (scheme, host, port) is the origin of
 * OBSERVATORY_PUBLIC_URL. A dropped link is replaced by LINK_REMOVED, so the sentence still says
 * that there was one.
 *
 * What counts as a link, case-insensitively:
 * - `scheme://…` with any scheme (`https:`, `ftp:`, `hxxps:` …);
 * - `javascript:`, `data:`, `vbscript:`, `mailto:`, `file:`, `blob:` followed by anything;
 * - `//host.tld…` (protocol-relative);
 * - `www.host.tld…`;
 * - `host.tld/…`: a dotted host name ending in a letters-only label, with a port or path after it
 *   (a bare `example.com` without a path stays: event types such as `crawl.page` look the same).
 * A link ends at whitespace, a quote or an angle bracket; closing punctuation at its end
 * (`.`, `,`, `)` …) is left to the sentence.
 */

export const LINK_REMOVED = '[link removed]';

const URL_CHARS = String.raw`[^\s<>"'\u0060]`;
// Laxer than DNS (a label may end in `-` or hold `_`): URL parsers accept those, so a link may use them.
const LABEL = String.raw`[\p{L}\p{N}_][\p{L}\p{N}_-]{0,62}`;
const HOST = String.raw`${LABEL}(?:\.${LABEL})*\.\p{L}{2,24}`;

const LINK = new RegExp(
  [
    String.raw`[a-z][a-z0-9+.-]{0,31}:\/\/${URL_CHARS}+`,
    String.raw`\b(?:javascript|data|vbscript|mailto|file|blob):${URL_CHARS}+`,
    String.raw`(?<![\p{L}\p{N}\/:])\/\/${HOST}${URL_CHARS}*`,
    String.raw`\bwww\d{0,3}\.${HOST}${URL_CHARS}*`,
    String.raw`(?<![\p{L}\p{N}.@-])${HOST}(?::\d{1,5})?\/${URL_CHARS}*`,
  ].join('|'),
  'giu',
);

/** Punctuation that ends a sentence rather than a link. */
const TRAILING = /[.,;:!?)\]}]+$/u;

/** Whether `link` (as written) resolves to `origin`; schemeless forms are read as https, then as http. */
function pointsAt(link: string, origin: string): boolean {
  const forms = /^[a-z][a-z0-9+.-]*:/i.test(link) ? [link] : link.startsWith('//') ? [`https:${link}`, `http:${link}`] : [`https://${link}`, `http://${link}`];
  return forms.some((form) => {
    try {
      return new URL(form).origin === origin;
    } catch {
      return false;
    }
  });
}

/**
 * `text` with every link that does not point at `origin` replaced by LINK_REMOVED, and how many
 * were dropped. `origin` is a URL origin (`https://observatory.example.com`); null drops every link.
 */
export function dropForeignLinks(text: string, origin: string | null): { text: string; dropped: number } {
  let dropped = 0;
  const out = text.replace(LINK, (match) => {
    const tail = TRAILING.exec(match)?.[0] ?? '';
    const link = match.slice(0, match.length - tail.length);
    if (link === '' || (origin !== null && pointsAt(link, origin))) return match;
    dropped += 1;
    return `${LINK_REMOVED}${tail}`;
  });
  return { text: out, dropped };
}

/** The origin links may point at: that of the service's public URL. */
export const linkOriginOf = (publicUrl: string) => new URL(publicUrl).origin;
