import type { Config } from '../../../platform/config.ts';
import { sha256Hex } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/db/client.ts';
import type { JobDefinition, JobStats } from '../../../platform/jobs/scheduler.ts';
import { parseCidr } from './ip.ts';
import { type RegistryHolder, rangesSourceKey, type Vendor, withRefreshedRanges } from './registry.ts';
import { listRangeSnapshots, upsertRangeSnapshot } from './repository.ts';

/**
 * The `vendor-ranges-refresh` job: fetches the JSON range lists vendors publish in the
 * `{creationTime, prefixes: [{ipv4Prefix} | {ipv6Prefix}]}` format (OpenAI, Google, Bing,
 * Perplexity, Apple, Common Crawl), stores them in vendor_range_snapshots and swaps the
 * in-memory registry. A list that cannot be fetched or read keeps the previous snapshot and is
 * counted as failed; a network failure never makes the job fail.
 */

export const REFRESH_JOB = 'vendor-ranges-refresh';
export const REFRESH_SCHEDULE = '23 3 * * *';
/** A range list larger than this is refused (the largest published today is ~100 KiB). */
export const MAX_RANGE_LIST_BYTES = 4 * 1024 * 1024;

export type FetchLike = (url: string, init: { signal: AbortSignal; headers: Record<string, string> }) => Promise<Response>;

export interface VendorJobDeps {
  db: Db;
  registryRef: RegistryHolder;
  config: { honeypot: Pick<Config['honeypot'], 'vendorRefresh'>; outbound: Pick<Config['outbound'], 'timeoutMs'> };
  /** Injectable for tests; the global fetch otherwise. */
  fetch?: FetchLike;
}

export interface RangeList {
  creationTime: string | null;
  cidrs: string[];
}

export interface RefreshStats extends JobStats {
  enabled: boolean;
  /** Vendors whose list was fetched and differed from the ranges in force. */
  fetched: number;
  /** Vendors whose list was fetched and equal to the ranges in force. */
  unchanged: number;
  /** Vendors whose list could not be fetched or read; their previous ranges stay. */
  failed: number;
  /** Vendors with a JSON list that were not fetched because refreshing is switched off. */
  skipped: number;
  failures: { url: string; vendors: string[]; error: string }[];
}

/** Reads one list in the `{creationTime, prefixes}` format; throws an Error saying what is wrong. */
export function parseRangeList(text: string): RangeList {
  const json = JSON.parse(text) as { creationTime?: unknown; prefixes?: unknown };
  if (typeof json !== 'object' || json === null || !Array.isArray(json.prefixes)) throw new Error('no prefixes array');
  const cidrs: string[] = [];
  json.prefixes.forEach((entry: unknown, i) => {
    const item = (entry ?? {}) as { ipv4Prefix?: unknown; ipv6Prefix?: unknown };
    const cidr = item.ipv4Prefix ?? item.ipv6Prefix;
    if (typeof cidr !== 'string' || parseCidr(cidr) === null) throw new Error(`prefixes[${i}] is not an ipv4Prefix or ipv6Prefix`);
    cidrs.push(cidr);
  });
  if (cidrs.length === 0) throw new Error('the list is empty');
  return { creationTime: typeof json.creationTime === 'string' ? json.creationTime : null, cidrs };
}

async function fetchRangeList(fetchFn: FetchLike, url: string, timeoutMs: number): Promise<RangeList> {
  const response = await fetchFn(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    throw new Error(`HTTP ${response.status}`);
  }
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_RANGE_LIST_BYTES) {
    await response.body?.cancel().catch(() => {});
    throw new Error(`larger than ${MAX_RANGE_LIST_BYTES} bytes`);
  }
  const text = await response.text();
  if (text.length > MAX_RANGE_LIST_BYTES) throw new Error(`larger than ${MAX_RANGE_LIST_BYTES} bytes`);
  return parseRangeList(text);
}

/** The digest of a prefix list as a set: order and duplicates do not change it. */
export function rangesDigest(cidrs: readonly string[]): string {
  return sha256Hex([...new Set(cidrs)].sort().join('\n'));
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'timed out';
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? error.message;
  }
  return String(error);
}

/** Vendors sharing one set of range URLs (e.g. Googlebot and Google-CloudVertexBot) share one fetch. */
function groupByLists(vendors: readonly Vendor[]): Map<string, Vendor[]> {
  const groups = new Map<string, Vendor[]>();
  for (const vendor of vendors) {
    if (vendor.rangesUrls.length === 0) continue;
    const key = rangesSourceKey(vendor);
    groups.set(key, [...(groups.get(key) ?? []), vendor]);
  }
  return groups;
}

async function fetchGroup(fetchFn: FetchLike, urls: readonly string[], timeoutMs: number): Promise<RangeList> {
  const lists = await Promise.all(urls.map((url) => fetchRangeList(fetchFn, url, timeoutMs)));
  return {
    creationTime: lists.map((l) => l.creationTime).find((t) => t !== null) ?? null,
    cidrs: [...new Set(lists.flatMap((l) => l.cidrs))],
  };
}

/** One run of the refresh; `now` is the time the run stands for (stored as `fetchedAt`). */
export async function refreshVendorRanges(deps: VendorJobDeps, now: Date): Promise<RefreshStats> {
  const groups = groupByLists(deps.registryRef.current.vendors);
  const candidates = [...groups.values()].reduce((n, g) => n + g.length, 0);
  const stats: RefreshStats = { enabled: deps.config.honeypot.vendorRefresh, fetched: 0, unchanged: 0, failed: 0, skipped: 0, failures: [] };
  if (!stats.enabled) return { ...stats, skipped: candidates };
  const fetchFn = deps.fetch ?? ((url, init) => fetch(url, init));
  const results = await Promise.allSettled(
    [...groups.entries()].map(async ([key, vendors]) => ({ key, vendors, list: await fetchGroup(fetchFn, vendors[0]!.rangesUrls, deps.config.outbound.timeoutMs) })),
  );
  const entries = [...groups.entries()];
  for (const [i, result] of results.entries()) {
    const [key, vendors] = entries[i]!;
    if (result.status === 'rejected') {
      stats.failed += vendors.length;
      stats.failures.push({ url: key, vendors: vendors.map((v) => v.id), error: describe(result.reason) });
      continue;
    }
    const { list } = result.value;
    const digest = rangesDigest(list.cidrs);
    for (const vendor of vendors) {
      if (digest === rangesDigest(vendor.cidrs)) stats.unchanged++;
      else stats.fetched++;
      await upsertRangeSnapshot(deps.db, {
        vendorId: vendor.id,
        sourceUrl: key,
        creationTime: list.creationTime,
        fetchedAt: now,
        cidrs: list.cidrs,
        sha256: digest,
      });
    }
  }
  await applyStoredRanges(deps);
  return stats;
}

/** Lays the stored snapshots over the registry in force (call once at start, after migrations). */
export async function applyStoredRanges(deps: Pick<VendorJobDeps, 'db' | 'registryRef'>): Promise<void> {
  const rows = await listRangeSnapshots(deps.db);
  deps.registryRef.current = withRefreshedRanges(deps.registryRef.current, rows);
}

export function vendorJobs(deps: VendorJobDeps): JobDefinition[] {
  return [
    {
      name: REFRESH_JOB,
      description:
        'Fetches the IP range lists vendors publish as JSON (OpenAI, Google, Bing, Perplexity, Apple, Common Crawl), stores them and swaps the vendor registry; a list that cannot be fetched keeps its previous snapshot.',
      schedule: REFRESH_SCHEDULE,
      run: ({ now }) => refreshVendorRanges(deps, now),
    },
  ];
}
