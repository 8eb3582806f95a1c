import type { UaClass } from './types';

/** What each verdict class means (docs/honeypot/vendors.md); a Record, so a class the service adds breaks the build. */
export const UA_CLASS_MEANING: Record<UaClass, string> = {
  KNOWN_LLM_AGENT: 'Names an AI vendor, and one of its published proofs (IP range or Web Bot Auth signature) holds.',
  VERIFIED_CRAWLER: 'Names a non-AI vendor (search engine, archiver, fetcher), and one of its published proofs holds.',
  LIAR: 'Names a vendor that publishes proofs, and every one of them failed for this request.',
  UNVERIFIED_AGENT: 'Names a vendor that publishes no proof: neither confirmed nor refuted.',
  UNKNOWN_BOT: 'Names no known vendor but is a bot (a crawler pattern or a client such as curl).',
  BROWSER: 'An ordinary browser that names no vendor and no bot.',
  UNKNOWN: 'Anything else, an empty user agent included.',
};

export const UA_CLASSES = Object.keys(UA_CLASS_MEANING) as UaClass[];

const TONE: Partial<Record<string, 'ok' | 'bad' | 'warn'>> = {
  KNOWN_LLM_AGENT: 'ok',
  VERIFIED_CRAWLER: 'ok',
  LIAR: 'bad',
  UNVERIFIED_AGENT: 'warn',
};

/** The class as a coloured badge with its meaning on hover. */
export function UaClassBadge({ value }: { value: string }) {
  const tone = TONE[value];
  return (
    <span className={`badge${tone ? ` ${tone}` : ''}`} title={UA_CLASS_MEANING[value as UaClass] ?? value}>
      {value}
    </span>
  );
}
