'use strict';
/**
 * Searches for the agent-search scenarios (bench/scenarios.ts), from words of the corpus
 * vocabulary, most frequent first. Two mixes:
 *
 * - `catalogueDraws` (the target's scenario): a fixed catalogue of distinct searches (one or two
 *   words, page 1–3, limit 5 or 10, a category one time in five), built from a fixed seed, and a
 *   fixed sequence of requests from it with Zipf-distributed popularity (the n-th most popular
 *   search is asked 1/n as often as the first), as agents repeat the popular questions. autocannon
 *   sends the sequence as prebuilt requests, so the load generator, which shares the machine's two
 *   cores with the server, does not rebuild every request.
 * - the module's export, an autocannon `setupRequest` (the long tail): every request a fresh draw
 *   of words, pages and filters, so nearly every search misses the cache and goes to PostgreSQL.
 *   It runs in the generator's worker and reads the words from BENCH_SEARCH_WORDS (comma-separated,
 *   set by the scenario's setup).
 *
 * Calls come from eight agent names.
 */
const CATEGORIES = ['tech', 'finance', 'travel', 'health', 'facts'];

function lcg(seed) {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
}

function searchPath(words, random) {
  const skewed = () => words[Math.floor(random() ** 2 * words.length)];
  const terms = random() < 0.6 ? [skewed()] : [skewed(), skewed()];
  const params = new URLSearchParams({ query: terms.join(' '), agent_name: `bench-agent-${Math.floor(random() * 8)}` });
  const page = 1 + Math.floor(random() ** 3 * 3);
  if (page > 1) params.set('page', String(page));
  if (random() < 0.3) params.set('limit', '10');
  if (random() < 0.2) params.set('category', CATEGORIES[Math.floor(random() * CATEGORIES.length)]);
  return `/api/agent?${params}`;
}

/** `count` catalogue searches drawn with Zipf popularity, from fixed seeds (the same every run). */
function catalogueDraws(words, size, count) {
  const build = lcg(20261124);
  const catalogue = Array.from({ length: size }, () => searchPath(words, build));
  const cumulative = [];
  let sum = 0;
  for (let rank = 1; rank <= size; rank++) cumulative.push((sum += 1 / rank));
  const draw = lcg(11242026);
  return Array.from({ length: count }, () => {
    const target = draw() * sum;
    let lo = 0;
    let hi = size - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < target) lo = mid + 1;
      else hi = mid;
    }
    return catalogue[lo];
  });
}

module.exports = function setupRequest(request) {
  const words = (process.env.BENCH_SEARCH_WORDS ?? '').split(',').filter(Boolean);
  if (words.length === 0) throw new Error('BENCH_SEARCH_WORDS must be set by the scenario setup');
  return { ...request, method: 'GET', path: searchPath(words, Math.random) };
};
module.exports.catalogueDraws = catalogueDraws;
