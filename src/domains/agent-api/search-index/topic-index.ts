import { LRUCache } from 'lru-cache';
import type { SortField, SortOrder } from '../repository.ts';
import { tsRank32 } from './rank.ts';
import { parseTsvector } from './tsvector.ts';

/**
 * The in-process inverted index of the public topic search (docs/agent-api/search-index.md). Pure:
 * built from rows PostgreSQL hands over (each topic's stored tsvector, in the search's sort
 * orders), it answers the same prefix-AND query the SQL path runs, with the same rows, order,
 * capped count and score, without a database round trip.
 *
 * Topics are numbered in the default order (created_at DESC, slug DESC), so that order is a walk
 * of the numbers; `byTitle` holds the numbers in (title ASC, slug ASC) order as PostgreSQL sorted
 * them (its collation, not JavaScript's). Lexemes are numbered in byte order, PostgreSQL's
 * tsvector order, so a prefix is one contiguous range of lexeme numbers and a topic's lexemes are
 * stored ascending. Each lexeme has a posting list (topic numbers, ascending); each topic keeps its
 * lexeme numbers and their packed positions, for the per-topic test and the rank.
 */

export interface IndexTopic {
  slug: string;
  title: string;
  category: string;
  summary: string;
  createdAtMs: number;
}

/** One topic as the loader hands it over, in the default order. */
export interface LoadedTopic extends IndexTopic {
  /** The stored `search` column's text output. */
  tsvector: string;
}

export interface IndexQuery {
  /** The query's stems (prefixes), as PostgreSQL's `to_tsquery` made them; repeats allowed. */
  stems: readonly string[];
  category: string | null;
  sort: SortField;
  order: SortOrder;
  limit: number;
  offset: number;
  /** Matches counted at most; beyond it `totalExact` is false. */
  totalCap: number;
}

export interface IndexHit extends IndexTopic {
  /** ts_rank(search, query, 32) as float4. */
  rank: number;
}

export interface IndexAnswer {
  hits: IndexHit[];
  hasMore: boolean;
  total: number;
  totalExact: boolean;
}

const byteOrder = (a: Buffer, b: Buffer) => Buffer.compare(a, b);

/** A growable Int32 array (the build appends millions of numbers). */
class IntList {
  data = new Int32Array(1024);
  length = 0;
  push(value: number) {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }
  done(): Int32Array {
    return this.data.slice(0, this.length);
  }
}

/** Collects topics in the default order, then freezes them into a TopicIndex. */
export class TopicIndexBuilder {
  private readonly topics: IndexTopic[] = [];
  private readonly titleRanks: number[] = [];
  private readonly lexemeIds = new Map<string, number>();
  private readonly lexemes: string[] = [];
  private readonly docStart = new IntList();
  private readonly docLexemes = new IntList();
  private readonly entryPositions = new IntList();
  private readonly docPositionStart = new IntList();
  private readonly positions = new IntList();

  constructor() {
    this.docStart.push(0);
    this.docPositionStart.push(0);
  }

  get size(): number {
    return this.topics.length;
  }

  /** Adds the next topic of the default order; `titleRank` is its place in (title, slug) order. */
  add(topic: LoadedTopic, titleRank: number): void {
    this.topics.push({ slug: topic.slug, title: topic.title, category: topic.category, summary: topic.summary, createdAtMs: topic.createdAtMs });
    this.titleRanks.push(titleRank);
    for (const entry of parseTsvector(topic.tsvector)) {
      let id = this.lexemeIds.get(entry.lexeme);
      if (id === undefined) {
        id = this.lexemes.length;
        this.lexemeIds.set(entry.lexeme, id);
        this.lexemes.push(entry.lexeme);
      }
      this.docLexemes.push(id);
      this.entryPositions.push(entry.positions.length);
      for (const packed of entry.positions) this.positions.push(packed);
    }
    this.docStart.push(this.docLexemes.length);
    this.docPositionStart.push(this.positions.length);
  }

  build(): TopicIndex {
    const bytes = this.lexemes.map((l) => Buffer.from(l, 'utf8'));
    const order = this.lexemes.map((_, i) => i).sort((a, b) => byteOrder(bytes[a]!, bytes[b]!));
    const finalId = new Int32Array(order.length);
    order.forEach((temp, final) => (finalId[temp] = final));
    const docLexemes = this.docLexemes.done().map((temp) => finalId[temp]!);
    const docStart = this.docStart.done();
    const n = this.topics.length;
    // Posting lists: counted, then filled in topic order, so each is ascending.
    const counts = new Int32Array(order.length + 1);
    for (const id of docLexemes) counts[id + 1]!++;
    for (let i = 1; i < counts.length; i++) counts[i]! += counts[i - 1]!;
    const postingStart = counts.slice();
    const postings = new Int32Array(docLexemes.length);
    const fill = counts.slice(0, order.length);
    for (let doc = 0; doc < n; doc++) {
      for (let e = docStart[doc]!; e < docStart[doc + 1]!; e++) postings[fill[docLexemes[e]!]!++] = doc;
    }
    const byTitle = new Int32Array(n);
    this.titleRanks.forEach((rank, doc) => (byTitle[rank] = doc));
    const sorted = order.map((temp) => bytes[temp]!);
    const lexiconStart = new Int32Array(sorted.length + 1);
    sorted.forEach((b, i) => (lexiconStart[i + 1] = lexiconStart[i]! + b.length));
    return new TopicIndex({
      topics: this.topics,
      lexicon: Buffer.concat(sorted),
      lexiconStart,
      docStart,
      docLexemes,
      // PostgreSQL keeps at most 256 positions per lexeme.
      entryPositions: new Uint16Array(this.entryPositions.done()),
      docPositionStart: this.docPositionStart.done(),
      positions: new Uint16Array(this.positions.done()),
      postingStart,
      postings,
      byTitle,
    });
  }
}

interface IndexParts {
  topics: IndexTopic[];
  /** Every lexeme's UTF-8 bytes, in byte order, end to end; lexeme i is lexicon[lexiconStart[i], lexiconStart[i + 1]). */
  lexicon: Buffer;
  lexiconStart: Int32Array;
  docStart: Int32Array;
  docLexemes: Int32Array;
  /** Positions of each (topic, lexeme) entry, in entry order. */
  entryPositions: Uint16Array;
  /** Where each topic's positions start in `positions`. */
  docPositionStart: Int32Array;
  positions: Uint16Array;
  postingStart: Int32Array;
  postings: Int32Array;
  byTitle: Int32Array;
}

/** A prefix as a range of lexeme numbers [lo, hi), with the postings it covers. */
interface PrefixRange {
  lo: number;
  hi: number;
  postings: number;
}

export class TopicIndex {
  private readonly parts: IndexParts;
  private readonly categoryCodes = new Map<string, number>();
  private readonly categoryOf: Uint8Array;

  constructor(parts: IndexParts) {
    this.parts = parts;
    this.categoryOf = new Uint8Array(parts.topics.length);
    parts.topics.forEach((t, doc) => {
      let code = this.categoryCodes.get(t.category);
      if (code === undefined) this.categoryCodes.set(t.category, (code = this.categoryCodes.size));
      this.categoryOf[doc] = code;
    });
  }

  get size(): number {
    return this.parts.topics.length;
  }

  private memory: number | null = null;

  /**
   * Bytes held: the typed arrays exactly, the strings estimated as V8 stores them (one byte a
   * character for Latin-1 text, two otherwise, plus a header) and each topic's object.
   */
  memoryBytes(): number {
    if (this.memory !== null) return this.memory;
    const p = this.parts;
    const arrays = [p.lexicon, p.lexiconStart, p.docStart, p.docLexemes, p.entryPositions, p.docPositionStart, p.positions, p.postingStart, p.postings, p.byTitle, this.categoryOf];
    let bytes = arrays.reduce((sum, a) => sum + a.byteLength, 0);
    const text = (s: string) => 16 + (/[^\u0000-\u00ff]/.test(s) ? 2 : 1) * s.length;
    for (const t of p.topics) bytes += text(t.slug) + text(t.title) + text(t.summary) + 56;
    this.memory = bytes;
    return bytes;
  }

  private lowerBound(key: Buffer): number {
    const { lexicon, lexiconStart } = this.parts;
    let lo = 0;
    let hi = lexiconStart.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (lexicon.compare(key, 0, key.length, lexiconStart[mid]!, lexiconStart[mid + 1]!) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * The lexemes a stem prefixes: from the stem itself up to (not including) the stem with its last
   * byte raised by one, which sorts after every string the stem prefixes (UTF-8 never holds 0xFF).
   */
  private rangeOf(stem: Buffer): PrefixRange {
    const after = Buffer.from(stem);
    after[after.length - 1]! += 1;
    const lo = this.lowerBound(stem);
    const hi = Math.max(lo, this.lowerBound(after));
    const { postingStart } = this.parts;
    return { lo, hi, postings: postingStart[hi]! - postingStart[lo]! };
  }

  /** Whether the topic has a lexeme numbered within [lo, hi): its lexemes are ascending. */
  private has(doc: number, range: PrefixRange): boolean {
    const { docStart, docLexemes } = this.parts;
    let lo = docStart[doc]!;
    let hi = docStart[doc + 1]!;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (docLexemes[mid]! < range.lo) lo = mid + 1;
      else hi = mid;
    }
    return lo < docStart[doc + 1]! && docLexemes[lo]! < range.hi;
  }

  private rankOf(doc: number, ranges: readonly PrefixRange[]): number {
    const { docStart, docLexemes, entryPositions, docPositionStart, positions } = this.parts;
    const items = ranges.map((range) => {
      const entries: number[][] = [];
      let at = docPositionStart[doc]!;
      for (let e = docStart[doc]!; e < docStart[doc + 1]!; e++) {
        const id = docLexemes[e]!;
        const count = entryPositions[e]!;
        if (id >= range.lo && id < range.hi) entries.push(Array.from(positions.subarray(at, at + count)));
        at += count;
      }
      return entries;
    });
    return tsRank32(items);
  }

  /** Prefix ranges by stem, for this index. */
  private readonly ranges = new LRUCache<string, PrefixRange & { bytes: Buffer }>({ max: RANGE_CACHE_MAX });

  private rangeFor(stem: string): PrefixRange & { bytes: Buffer } {
    let range = this.ranges.get(stem);
    if (!range) {
      const bytes = Buffer.from(stem, 'utf8');
      range = { ...this.rangeOf(bytes), bytes };
      this.ranges.set(stem, range);
    }
    return range;
  }

  search(query: IndexQuery): IndexAnswer {
    const n = this.size;
    const empty: IndexAnswer = { hits: [], hasMore: false, total: 0, totalExact: true };
    if (n === 0) return empty;
    // PostgreSQL's item order: byte order of the stems, repeats removed.
    const ranges = [...new Set(query.stems)].filter((s) => s !== '').map((s) => this.rangeFor(s));
    if (ranges.length === 0 || ranges.some((r) => r.hi === r.lo)) return empty;
    ranges.sort((a, b) => Buffer.compare(a.bytes, b.bytes));
    let category = -1;
    if (query.category !== null) {
      const code = this.categoryCodes.get(query.category);
      if (code === undefined) return empty;
      category = code;
    }
    // The rarest prefix drives; the others (rarest first) are tested on what it yields.
    const byCount = [...ranges].sort((a, b) => a.postings - b.postings);
    const driver = byCount[0]!;
    const others = byCount.slice(1);
    const need = Math.max(query.totalCap + 1, query.offset + query.limit + 1);
    // Each other prefix is tested per visited topic: by a bitmap of its postings (built once, a
    // nanosecond or two a posting) when the walk will visit enough topics to repay it, else by a
    // binary search of the topic's lexemes (about a hundred nanoseconds).
    const selectivity = others.reduce((product, r) => product * Math.min(1, r.postings / n), category < 0 ? 1 : 1 / this.categoryCodes.size);
    const visits = Math.min(driver.postings, selectivity > 0 ? need / selectivity : n);
    const bitmaps: Uint32Array[] = [];
    const searched: PrefixRange[] = [];
    for (const range of others) {
      if (range.postings < 32 * visits) bitmaps.push(this.bitmapOf(range, bitmaps.length + 1));
      else searched.push(range);
    }
    const categoryOf = this.categoryOf;
    const accepts = (doc: number): boolean => {
      if (category >= 0 && categoryOf[doc] !== category) return false;
      const word = doc >>> 5;
      const mask = 1 << (doc & 31);
      for (let i = 0; i < bitmaps.length; i++) if ((bitmaps[i]![word]! & mask) === 0) return false;
      for (let i = 0; i < searched.length; i++) if (!this.has(doc, searched[i]!)) return false;
      return true;
    };
    const found = this.matching(driver, accepts, query, need);

    const pageEnd = query.offset + query.limit;
    const total = found.length;
    return {
      hits: found.slice(query.offset, pageEnd).map((doc) => ({ ...this.parts.topics[doc]!, rank: this.rankOf(doc, ranges) })),
      hasMore: found.length > pageEnd,
      total: Math.min(total, query.totalCap),
      totalExact: total <= query.totalCap,
    };
  }

  /**
   * The first `need` matches in answer order (all of them when fewer). Topics the driver's postings
   * do not hold are never visited: in created_at order its postings are walked in order (through a
   * bitmap when the prefix covers several lexemes) and the walk stops at `need`; in title order a
   * few matches are sorted by title, many are found by walking the title order over the bitmap.
   */
  private matching(driver: PrefixRange, accepts: (doc: number) => boolean, query: IndexQuery, need: number): number[] {
    const { postingStart, postings, byTitle } = this.parts;
    const found: number[] = [];
    const descending = query.order === 'desc';
    const single = driver.hi - driver.lo === 1;
    if (query.sort === 'createdAt' && single) {
      // Numbers run newest first, so the posting list is already in answer order.
      const from = postingStart[driver.lo]!;
      const to = postingStart[driver.hi]!;
      if (descending) {
        for (let i = from; i < to && found.length < need; i++) if (accepts(postings[i]!)) found.push(postings[i]!);
      } else {
        for (let i = to - 1; i >= from && found.length < need; i--) if (accepts(postings[i]!)) found.push(postings[i]!);
      }
      return found;
    }
    if (query.sort === 'title' && driver.postings * 8 < this.size) {
      const titleRank = this.titleRanks();
      // A topic holding several lexemes of the prefix is in several of its lists.
      const seen = single ? null : new Set<number>();
      for (let i = postingStart[driver.lo]!; i < postingStart[driver.hi]!; i++) {
        const doc = postings[i]!;
        if (seen) {
          if (seen.has(doc)) continue;
          seen.add(doc);
        }
        if (accepts(doc)) found.push(doc);
      }
      return found.sort(descending ? (a, b) => titleRank[b]! - titleRank[a]! : (a, b) => titleRank[a]! - titleRank[b]!);
    }
    const bits = this.bitmapOf(driver, 0);
    const n = this.size;
    if (query.sort === 'createdAt') {
      // Set bits in topic-number order (or its reverse), skipping empty words 32 topics at a time.
      const words = bits.length;
      for (let w = 0; w < words && found.length < need; w++) {
        const word = descending ? w : words - 1 - w;
        let pending = bits[word]!;
        while (pending !== 0 && found.length < need) {
          const bit = descending ? 31 - Math.clz32(pending & -pending) : 31 - Math.clz32(pending);
          pending &= ~(1 << bit);
          const doc = (word << 5) | bit;
          if (accepts(doc)) found.push(doc);
        }
      }
      return found;
    }
    for (let i = 0; i < n && found.length < need; i++) {
      const doc = byTitle[descending ? n - 1 - i : i]!;
      if ((bits[doc >>> 5]! & (1 << (doc & 31))) !== 0 && accepts(doc)) found.push(doc);
    }
    return found;
  }

  /** Scratch bitmaps, one per query item (searches are synchronous, so one set serves them all). */
  private readonly scratch: Uint32Array[] = [];

  /** A bitmap of the topics holding any lexeme of the range, in scratch slot `slot`. */
  private bitmapOf(range: PrefixRange, slot: number): Uint32Array {
    const { postingStart, postings } = this.parts;
    const bits = (this.scratch[slot] ??= new Uint32Array((this.size + 31) >>> 5));
    bits.fill(0);
    const end = postingStart[range.hi]!;
    for (let i = postingStart[range.lo]!; i < end; i++) {
      const doc = postings[i]!;
      bits[doc >>> 5]! |= 1 << (doc & 31);
    }
    return bits;
  }

  private titleRankCache: Int32Array | null = null;
  private titleRanks(): Int32Array {
    if (!this.titleRankCache) {
      const ranks = new Int32Array(this.size);
      this.parts.byTitle.forEach((doc, rank) => (ranks[doc] = rank));
      this.titleRankCache = ranks;
    }
    return this.titleRankCache;
  }
}

/** Stems whose prefix ranges an index remembers. */
const RANGE_CACHE_MAX = 50_000;

