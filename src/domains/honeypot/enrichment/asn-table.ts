/**
 * An in-memory IP-range → AS number table built from the `-num.csv` files of
 * `@ip-location-db/asn` (one line per range: `first,last,asn,organisation`, the addresses as
 * unsigned decimal integers, the organisation RFC 4180-quoted when it holds a comma or a quote).
 * The npm registry has no MMDB build of that data, so this stands in for a MaxMind reader: sorted
 * typed arrays and a binary search.
 */

export interface AsnHit {
  asn: number;
  asOrg: string | null;
}

export interface AsnTableStats {
  ranges: number;
  /** Ranges that overlapped the one before them; the earlier one is cut where the later begins. */
  overlapsResolved: number;
  /**
   * Of those, how many lay wholly inside the earlier range, whose remainder past the later
   * range's end is then lost (left unattributed rather than guessed).
   */
  tailsDropped: number;
}

const MASK64 = (1n << 64n) - 1n;

/** Organisation names are repeated thousands of times; each distinct name is kept once. */
class OrgNames {
  readonly names: string[] = [];
  private readonly index = new Map<string, number>();
  id(name: string): number {
    let i = this.index.get(name);
    if (i === undefined) {
      i = this.names.length;
      this.names.push(name);
      this.index.set(name, i);
    }
    return i;
  }
}

interface CsvRow {
  first: string;
  last: string;
  asn: number;
  org: string;
}

/** Splits one CSV line into its four fields; null when the line is not of that shape. */
export function parseAsnCsvLine(line: string): CsvRow | null {
  const a = line.indexOf(',');
  const b = a < 0 ? -1 : line.indexOf(',', a + 1);
  const c = b < 0 ? -1 : line.indexOf(',', b + 1);
  if (c < 0) return null;
  const first = line.slice(0, a);
  const last = line.slice(a + 1, b);
  const asnText = line.slice(b + 1, c);
  if (!/^\d+$/.test(first) || !/^\d+$/.test(last) || !/^\d{1,10}$/.test(asnText)) return null;
  const asn = Number(asnText);
  if (asn > 0xffffffff) return null;
  let org = line.slice(c + 1);
  if (org.endsWith('\r')) org = org.slice(0, -1);
  if (org.startsWith('"')) {
    if (org.length < 2 || !org.endsWith('"')) return null;
    org = org.slice(1, -1).replaceAll('""', '"');
  }
  return { first, last, asn, org };
}

function* rows(csv: string, file: string): Generator<CsvRow> {
  let lineNo = 0;
  for (const line of csv.split('\n')) {
    lineNo += 1;
    if (line.length === 0 || line === '\r') continue;
    const row = parseAsnCsvLine(line);
    if (row === null) throw new Error(`${file}:${lineNo}: not a "first,last,asn,organisation" line`);
    yield row;
  }
}

/** IPv4 ranges: first/last addresses as 32-bit unsigned integers. */
export class Ipv4AsnTable {
  private constructor(
    private readonly first: Uint32Array,
    private readonly last: Uint32Array,
    private readonly asns: Uint32Array,
    private readonly orgIds: Uint32Array,
    private readonly orgs: string[],
    readonly stats: AsnTableStats,
  ) {}

  static fromCsv(csv: string, orgs: OrgNames, file = 'ipv4 csv'): Ipv4AsnTable {
    const first: number[] = [];
    const last: number[] = [];
    const asns: number[] = [];
    const orgIds: number[] = [];
    let overlaps = 0;
    let tailsDropped = 0;
    for (const row of rows(csv, file)) {
      const lo = Number(row.first);
      const hi = Number(row.last);
      if (lo > 0xffffffff || hi > 0xffffffff || hi < lo) throw new Error(`${file}: bad range ${row.first}-${row.last}`);
      const n = first.length;
      if (n > 0) {
        const prevFirst = first[n - 1]!;
        if (lo < prevFirst) throw new Error(`${file}: ranges are not sorted at ${row.first}`);
        if (lo <= last[n - 1]!) {
          overlaps += 1;
          if (last[n - 1]! > hi) tailsDropped += 1;
          if (lo === prevFirst) {
            // The later range replaces the earlier one entirely.
            first.pop();
            last.pop();
            asns.pop();
            orgIds.pop();
          } else {
            last[n - 1] = lo - 1;
          }
        }
      }
      first.push(lo);
      last.push(hi);
      asns.push(row.asn);
      orgIds.push(orgs.id(row.org));
    }
    return new Ipv4AsnTable(
      Uint32Array.from(first),
      Uint32Array.from(last),
      Uint32Array.from(asns),
      Uint32Array.from(orgIds),
      orgs.names,
      { ranges: first.length, overlapsResolved: overlaps, tailsDropped },
    );
  }

  lookup(address: number): AsnHit | null {
    const { first, last } = this;
    let lo = 0;
    let hi = first.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (first[mid]! <= address) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (found < 0 || address > last[found]!) return null;
    return { asn: this.asns[found]!, asOrg: this.orgs[this.orgIds[found]!] || null };
  }
}

/** IPv6 ranges: first/last addresses as 128-bit unsigned integers split into two 64-bit halves. */
export class Ipv6AsnTable {
  private constructor(
    private readonly firstHi: BigUint64Array,
    private readonly firstLo: BigUint64Array,
    private readonly lastHi: BigUint64Array,
    private readonly lastLo: BigUint64Array,
    private readonly asns: Uint32Array,
    private readonly orgIds: Uint32Array,
    private readonly orgs: string[],
    readonly stats: AsnTableStats,
  ) {}

  static fromCsv(csv: string, orgs: OrgNames, file = 'ipv6 csv'): Ipv6AsnTable {
    const first: bigint[] = [];
    const last: bigint[] = [];
    const asns: number[] = [];
    const orgIds: number[] = [];
    let overlaps = 0;
    let tailsDropped = 0;
    const max = (1n << 128n) - 1n;
    for (const row of rows(csv, file)) {
      const lo = BigInt(row.first);
      const hi = BigInt(row.last);
      if (lo > max || hi > max || hi < lo) throw new Error(`${file}: bad range ${row.first}-${row.last}`);
      const n = first.length;
      if (n > 0) {
        const prevFirst = first[n - 1]!;
        if (lo < prevFirst) throw new Error(`${file}: ranges are not sorted at ${row.first}`);
        if (lo <= last[n - 1]!) {
          overlaps += 1;
          if (last[n - 1]! > hi) tailsDropped += 1;
          if (lo === prevFirst) {
            first.pop();
            last.pop();
            asns.pop();
            orgIds.pop();
          } else {
            last[n - 1] = lo - 1n;
          }
        }
      }
      first.push(lo);
      last.push(hi);
      asns.push(row.asn);
      orgIds.push(orgs.id(row.org));
    }
    const n = first.length;
    const firstHi = new BigUint64Array(n);
    const firstLo = new BigUint64Array(n);
    const lastHi = new BigUint64Array(n);
    const lastLo = new BigUint64Array(n);
    for (let i = 0; i < n; i++) {
      firstHi[i] = first[i]! >> 64n;
      firstLo[i] = first[i]! & MASK64;
      lastHi[i] = last[i]! >> 64n;
      lastLo[i] = last[i]! & MASK64;
    }
    return new Ipv6AsnTable(firstHi, firstLo, lastHi, lastLo, Uint32Array.from(asns), Uint32Array.from(orgIds), orgs.names, {
      ranges: n,
      overlapsResolved: overlaps,
      tailsDropped,
    });
  }

  /** `parts`: the eight 16-bit groups of the address. */
  lookup(parts: readonly number[]): AsnHit | null {
    let hiWord = 0n;
    let loWord = 0n;
    for (let i = 0; i < 4; i++) hiWord = (hiWord << 16n) | BigInt(parts[i] ?? 0);
    for (let i = 4; i < 8; i++) loWord = (loWord << 16n) | BigInt(parts[i] ?? 0);
    const { firstHi, firstLo } = this;
    let lo = 0;
    let hi = firstHi.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const fh = firstHi[mid]!;
      if (fh < hiWord || (fh === hiWord && firstLo[mid]! <= loWord)) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (found < 0) return null;
    const lh = this.lastHi[found]!;
    if (hiWord > lh || (hiWord === lh && loWord > this.lastLo[found]!)) return null;
    return { asn: this.asns[found]!, asOrg: this.orgs[this.orgIds[found]!] || null };
  }
}

export interface AsnTables {
  v4: Ipv4AsnTable;
  v6: Ipv6AsnTable;
  /** Distinct organisation names kept. */
  organisations: number;
}

/** Builds both tables from the text of the two CSV files; throws on a malformed or unsorted file. */
export function buildAsnTables(ipv4Csv: string, ipv6Csv: string): AsnTables {
  const orgs = new OrgNames();
  const v4 = Ipv4AsnTable.fromCsv(ipv4Csv, orgs, 'asn-ipv4-num.csv');
  const v6 = Ipv6AsnTable.fromCsv(ipv6Csv, orgs, 'asn-ipv6-num.csv');
  return { v4, v6, organisations: orgs.names.length };
}
