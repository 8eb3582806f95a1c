import type { KeyObject } from 'node:crypto';
import { memoizeByText } from '../../../platform/memo.ts';
import { type ParsedIp, parseIp, PrefixIndex } from './ip.ts';
import { hasProof, type ProofSource, proofSourcesOf, type Vendor, type VendorRegistry } from './registry.ts';
import { type RdnsFact, rdnsFactFrom, type RdnsStatus, rdnsStatus } from './reverse-dns.ts';
import { genericBotRule, isBrowser } from './ua.ts';
import { checkWebBotAuth, headerValue, type SignatureCheck, type SignatureStatus } from './web-bot-auth.ts';

/**
 * The crawler-verification classifier (spec D3). A request whose UA names a registry vendor is
 * checked against every proof the registry has for that vendor (its published IP prefixes, its
 * Web Bot Auth keys, the domains its hosts' reverse DNS names fall under): one passing makes it
 * verified, the checked ones failing makes it a LIAR, none published leaves it unverified. Other
 * requests are sorted into generic bots, browsers and the rest.
 *
 * The rule itself (`decide`) is a pure function of the vendors claimed and the proof facts, so
 * `reclassify` can re-run it from a stored row's evidence, without the raw IP.
 */

export const UA_CLASSES = [
  { value: 'KNOWN_LLM_AGENT', meaning: 'The UA names an AI vendor of the registry and a published proof (IP range or Web Bot Auth signature) holds.' },
  { value: 'VERIFIED_CRAWLER', meaning: 'The UA names a non-AI vendor of the registry (search engine, archiver, fetcher) and a published proof holds.' },
  { value: 'LIAR', meaning: 'The UA names a registry vendor that publishes proofs, and every one of them fails for this request.' },
  { value: 'UNVERIFIED_AGENT', meaning: 'The UA names a registry vendor whose proof could not be checked (it publishes none, e.g. Anthropic, or its reverse DNS has not answered): neither confirmed nor refuted.' },
  { value: 'UNKNOWN_BOT', meaning: 'The UA names no registry vendor but is a bot: a crawler-user-agents pattern or an obvious client token (curl, python-requests, headless, ...) matches.' },
  { value: 'BROWSER', meaning: 'An ordinary browser user agent (Mozilla/5.0 with a browser engine and product) that names no vendor and no bot.' },
  { value: 'UNKNOWN', meaning: 'Anything else, including an empty user agent.' },
] as const;

export type UaClass = (typeof UA_CLASSES)[number]['value'];
export const UA_CLASS_VALUES: readonly UaClass[] = UA_CLASSES.map((c) => c.value);
/** The classes counted as "known and verified": a registry vendor whose published proof held (docs/honeypot/vendors.md). */
export const VERIFIED_CLASSES: readonly string[] = ['KNOWN_LLM_AGENT', 'VERIFIED_CRAWLER'] satisfies UaClass[];

/**
 * What the verifier saw, stored with the event so replay can re-derive the class without the
 * raw IP. `ipVendors` lists every registry vendor whose prefixes hold the IP (with the prefix);
 * `claimed` lists the vendors the request named, each of which was compared with the IP.
 */
export type Evidence = {
  v: 1;
  vendorId: string | null;
  claimed: string[];
  ipValid: boolean | null;
  ipInRange: boolean | null;
  matchedCidr: string | null;
  ipVendors: Record<string, string>;
  signature: SignatureStatus;
  keyid: string | null;
  signatureError: string | null;
  /** How a UA naming no vendor was sorted: `crawler-user-agents:<pattern>`, `token:<t>`, `browser`, `empty`, `unrecognised`; `vendor` otherwise. */
  rule: string;
  /** The client address's forward-confirmed reverse DNS, when a claimed vendor publishes domains and nothing else verified it; else null. */
  rdns: RdnsFact | null;
  /** The proof sources the verdict's vendor publishes; empty when it publishes none; null when no vendor is named. */
  proofSources: ProofSource[] | null;
  /**
   * Why an UNVERIFIED_AGENT verdict is unverified: `no-proof-source` (the vendor publishes none),
   * `lookup-pending` (its reverse DNS lookup had not answered; the event is judged again when it
   * does), `lookup-failed` (the lookup failed or was not made), `not-compared` (replayed with a
   * registry that names a vendor this event's address was never compared with). Null otherwise.
   */
  unverifiedReason: UnverifiedReason | null;
};

export type UnverifiedReason = 'no-proof-source' | 'lookup-pending' | 'lookup-failed' | 'not-compared';

export interface Verdict {
  uaClass: UaClass;
  vendorId: string | null;
  /** The proof that verified the claim: `ip-range:<cidr>`, `web-bot-auth:<keyid>` or `fcrdns:<name>`; null unless verified. */
  proof: string | null;
  evidence: Evidence;
}

export interface ClassifyInput {
  ua: string;
  ip: string;
  headers: Record<string, string>;
  method: string;
  path: string;
  now: Date;
  /**
   * The reverse DNS of `ip` as far as known now: a cached answer, or `pending` once a lookup has
   * been started. Asked only when a claimed vendor publishes domains and no other proof holds;
   * absent, such a request is judged as if lookups were turned off.
   */
  reverseDns?: (ip: string) => RdnsFact;
}

/** The proof facts `decide` works from; computed live by `classifyRequest`, read back by `reclassify`. */
export interface ProofFacts {
  /** Whether the IP parsed; null on replay when the evidence does not say. */
  ipValid: boolean | null;
  ipVendors: Readonly<Record<string, string>>;
  /** Vendors whose prefixes were compared with the IP: all of them live, the stored `claimed` on replay. */
  checked: 'all' | ReadonlySet<string>;
  signature: SignatureCheck;
  /** The client address's reverse DNS; null when it was not consulted. */
  rdns: RdnsFact | null;
}

function signatureAgentOf(headers: Record<string, string>): string | null {
  const raw = headerValue(headers, 'signature-agent');
  if (raw === undefined) return null;
  const quoted = /"([^"]*)"/.exec(raw);
  return (quoted ? quoted[1]! : raw.trim()).replace(/\/+$/, '');
}

/**
 * What is derived once per registry (the refresh job swaps it): the vendors whose `uaPattern` a UA
 * matches, remembered per UA, and every vendor's prefixes indexed for membership tests.
 */
interface RegistryLookups {
  namedByUa: (ua: string) => readonly Vendor[];
  prefixes: PrefixIndex;
  /** The Web Bot Auth key of a keyid among every vendor's keys. */
  keyFor: (keyid: string) => KeyObject | undefined;
}
const lookups = new WeakMap<VendorRegistry, RegistryLookups>();
function lookupsOf(registry: VendorRegistry): RegistryLookups {
  let known = lookups.get(registry);
  if (!known) {
    known = {
      namedByUa: memoizeByText((text) => registry.vendors.filter((v) => v.ua.test(text))),
      prefixes: new PrefixIndex(registry.vendors.map((v) => v.ranges)),
      keyFor: keyLookup(registry),
    };
    lookups.set(registry, known);
  }
  return known;
}

/**
 * The vendors a request names, in registry order: by its UA matching `uaPattern` or by its
 * `Signature-Agent` header naming the vendor's agent. A request that names none this way but
 * carries a valid signature is taken to name the vendors owning that key (an agent behind a
 * browser UA); a signature never adds a vendor to a UA that names another one.
 */
export function claimedVendors(registry: VendorRegistry, ua: string, headers: Record<string, string>, signature: SignatureCheck): Vendor[] {
  const agent = signatureAgentOf(headers);
  const byUa = lookupsOf(registry).namedByUa(ua);
  const named =
    agent === null
      ? [...byUa]
      : registry.vendors.filter(
          (v) => byUa.includes(v) || (v.webBotAuth?.signatureAgent != null && v.webBotAuth.signatureAgent.replace(/\/+$/, '') === agent),
        );
  if (named.length > 0 || signature.status !== 'valid' || signature.keyid === null) return named;
  const keyid = signature.keyid;
  return registry.vendors.filter((v) => v.keys.has(keyid));
}

type IpStatus = 'in' | 'out' | 'unknown' | 'none';

function ipStatus(vendor: Vendor, facts: ProofFacts): IpStatus {
  if (vendor.ranges.length === 0) return 'none';
  if (facts.ipVendors[vendor.id] !== undefined) return 'in';
  if (facts.ipValid === false) return 'out';
  if (facts.ipValid === null) return 'unknown';
  return facts.checked === 'all' || facts.checked.has(vendor.id) ? 'out' : 'unknown';
}

type Outcome = 'verified' | 'failed' | 'unproven';

interface VendorOutcome {
  outcome: Outcome;
  proof: string | null;
  ip: IpStatus;
  rdns: RdnsStatus;
  unverifiedReason: UnverifiedReason | null;
}

// Module functions rather than closures made per outcome: this runs for every event that names a vendor.
const verifiedBy = (proof: string, ip: IpStatus, rdns: RdnsStatus): VendorOutcome => ({ outcome: 'verified', proof, ip, rdns, unverifiedReason: null });
const unprovenFor = (why: UnverifiedReason, ip: IpStatus, rdns: RdnsStatus): VendorOutcome => ({ outcome: 'unproven', proof: null, ip, rdns, unverifiedReason: why });

function outcomeOf(vendor: Vendor, facts: ProofFacts): VendorOutcome {
  const ip = ipStatus(vendor, facts);
  const rdns = rdnsStatus(vendor, facts.rdns);
  const { signature } = facts;
  if (signature.status === 'valid' && signature.keyid !== null && vendor.keys.has(signature.keyid)) return verifiedBy(`web-bot-auth:${signature.keyid}`, ip, rdns);
  if (ip === 'in') return verifiedBy(`ip-range:${facts.ipVendors[vendor.id]}`, ip, rdns);
  if (rdns.status === 'in') return verifiedBy(`fcrdns:${rdns.name}`, ip, rdns);
  if (!hasProof(vendor)) return unprovenFor('no-proof-source', ip, rdns);
  // On replay the IP was never compared with this vendor's prefixes.
  if (ip === 'unknown') return unprovenFor('not-compared', ip, rdns);
  // A reverse DNS answer still to come (or that never came) settles nothing by itself; beside
  // ranges or keys that failed it does not save the claim, and the answer can still verify it.
  if (rdns.status === 'unknown' && vendor.ranges.length === 0 && vendor.keys.size === 0) {
    return unprovenFor(facts.rdns?.status === 'pending' ? 'lookup-pending' : 'lookup-failed', ip, rdns);
  }
  return { outcome: 'failed', proof: null, ip, rdns, unverifiedReason: null };
}

/** The rule of spec D3 over the claimed vendors; null when the request names none. */
export function decide(claimed: readonly Vendor[], facts: ProofFacts): (Omit<Verdict, 'evidence'> & VendorOutcome & { vendor: Vendor }) | null {
  if (claimed.length === 0) return null;
  const outcomes = claimed.map((vendor) => ({ vendor, ...outcomeOf(vendor, facts) }));
  const verified = outcomes.find((o) => o.outcome === 'verified');
  if (verified) {
    const uaClass = verified.vendor.isAi ? 'KNOWN_LLM_AGENT' : 'VERIFIED_CRAWLER';
    return { ...verified, uaClass, vendorId: verified.vendor.id };
  }
  const failed = outcomes.find((o) => o.outcome === 'failed');
  const chosen = failed ?? outcomes[0]!;
  return { ...chosen, uaClass: failed ? 'LIAR' : 'UNVERIFIED_AGENT', vendorId: chosen.vendor.id, proof: null };
}

/** How a UA that names no vendor is sorted; a pure function of the UA, so remembered per UA. */
export const classifyUnclaimed = memoizeByText(sortUnclaimed);

function sortUnclaimed(ua: string): { uaClass: UaClass; rule: string } {
  if (ua.trim() === '') return { uaClass: 'UNKNOWN', rule: 'empty' };
  const bot = genericBotRule(ua);
  if (bot !== null) return { uaClass: 'UNKNOWN_BOT', rule: bot };
  if (isBrowser(ua)) return { uaClass: 'BROWSER', rule: 'browser' };
  return { uaClass: 'UNKNOWN', rule: 'unrecognised' };
}

function verdictOf(ua: string, claimed: readonly Vendor[], facts: ProofFacts): Verdict {
  const decided = decide(claimed, facts);
  const unclaimed = decided === null ? classifyUnclaimed(ua) : null;
  const evidence: Evidence = {
    v: 1,
    vendorId: decided?.vendorId ?? null,
    claimed: claimed.map((v) => v.id),
    ipValid: facts.ipValid,
    ipInRange: decided === null ? null : decided.ip === 'in' ? true : decided.ip === 'out' ? false : null,
    matchedCidr: decided?.ip === 'in' ? facts.ipVendors[decided.vendorId!]! : null,
    ipVendors: { ...facts.ipVendors },
    signature: facts.signature.status,
    keyid: facts.signature.keyid,
    signatureError: facts.signature.error,
    rule: unclaimed?.rule ?? 'vendor',
    rdns: facts.rdns,
    proofSources: decided === null ? null : proofSourcesOf(decided.vendor),
    unverifiedReason: decided?.uaClass === 'UNVERIFIED_AGENT' ? decided.unverifiedReason : null,
  };
  if (decided === null) return { uaClass: unclaimed!.uaClass, vendorId: null, proof: null, evidence };
  return { uaClass: decided.uaClass, vendorId: decided.vendorId, proof: decided.proof, evidence };
}

/** Every registry vendor whose published prefixes hold the address, with the first such prefix. */
export function vendorsHoldingIp(registry: VendorRegistry, ip: ParsedIp | null): Record<string, string> {
  const out: Record<string, string> = {};
  if (ip === null) return out;
  const hits = lookupsOf(registry).prefixes.firstOfEach(ip);
  // Most addresses are in no vendor's prefixes; otherwise the vendors are named in registry order.
  if (hits.size === 0) return out;
  registry.vendors.forEach((vendor, i) => {
    const hit = hits.get(i);
    if (hit) out[vendor.id] = hit.cidr;
  });
  return out;
}

function keyLookup(registry: VendorRegistry) {
  return (keyid: string) => {
    for (const vendor of registry.vendors) {
      const key = vendor.keys.get(keyid);
      if (key) return key;
    }
    return undefined;
  };
}

/** Classifies one request. Never throws on any strings. */
export function classifyRequest(registry: VendorRegistry, input: ClassifyInput): Verdict {
  const ua = typeof input.ua === 'string' ? input.ua : '';
  const headers = input.headers ?? {};
  const ip = parseIp(input.ip);
  const signature = checkWebBotAuth(
    { method: String(input.method ?? 'GET'), path: String(input.path ?? '/'), headers, now: input.now },
    lookupsOf(registry).keyFor,
  );
  const facts: ProofFacts = { ipValid: ip !== null, ipVendors: vendorsHoldingIp(registry, ip), checked: 'all', signature, rdns: null };
  const claimed = claimedVendors(registry, ua, headers, signature);
  // Reverse DNS is asked only when it could change the verdict: a vendor claimed publishes
  // domains, and no quicker proof already verified the request.
  if (ip !== null && claimed.some((v) => v.reverseDns.length > 0) && !isVerifiedOutcome(decide(claimed, facts))) {
    facts.rdns = input.reverseDns ? input.reverseDns(input.ip) : { status: 'skipped', why: 'off' };
  }
  return verdictOf(ua, claimed, facts);
}

function isVerifiedOutcome(decided: ReturnType<typeof decide>): boolean {
  return decided !== null && decided.outcome === 'verified';
}

const STATUSES: readonly SignatureStatus[] = ['valid', 'invalid', 'absent'];

/** The proof facts a stored `evidence` holds; anything missing or malformed reads as not seen. */
export function factsFromEvidence(evidence: Record<string, unknown>): ProofFacts {
  const ipVendors: Record<string, string> = {};
  const rawVendors = evidence.ipVendors;
  if (rawVendors && typeof rawVendors === 'object' && !Array.isArray(rawVendors)) {
    for (const [id, cidr] of Object.entries(rawVendors)) if (typeof cidr === 'string') ipVendors[id] = cidr;
  }
  const claimed = Array.isArray(evidence.claimed) ? evidence.claimed.filter((c): c is string => typeof c === 'string') : [];
  const status = STATUSES.includes(evidence.signature as SignatureStatus) ? (evidence.signature as SignatureStatus) : 'absent';
  const keyid = typeof evidence.keyid === 'string' ? evidence.keyid : null;
  return {
    ipValid: typeof evidence.ipValid === 'boolean' ? evidence.ipValid : null,
    ipVendors,
    rdns: rdnsFactFrom(evidence.rdns),
    checked: new Set(claimed),
    signature: {
      status: status === 'valid' && keyid === null ? 'invalid' : status,
      keyid,
      error: typeof evidence.signatureError === 'string' ? evidence.signatureError : null,
    },
  };
}

/**
 * Re-derives the verdict of a stored event with the registry given: the UA (and headers) are
 * matched again, the proof facts come from the stored evidence. With the registry the event was
 * classified with, it returns exactly what `classifyRequest` returned. A vendor claimed now whose
 * prefixes were never compared with the IP (it was added or its pattern widened since) cannot be
 * called a liar from the evidence alone: it comes out UNVERIFIED_AGENT.
 */
export function reclassify(registry: VendorRegistry, row: { ua: string; headers: Record<string, string>; evidence: Record<string, unknown> }): Verdict {
  const ua = typeof row.ua === 'string' ? row.ua : '';
  const headers = row.headers ?? {};
  const facts = factsFromEvidence(row.evidence ?? {});
  return verdictOf(ua, claimedVendors(registry, ua, headers, facts.signature), facts);
}
