'use strict';
/**
 * autocannon `setupRequest` module for the agent-search scenario (bench/scenarios.ts): each request
 * is a GET /api/agent with one or two words drawn from the corpus vocabulary (BENCH_SEARCH_WORDS,
 * comma-separated, set by the scenario's setup), a page of 1 to 3, a limit of 5 or 10, and a
 * category one time in four, from one of eight agent names. The mix has several hundred thousand
 * distinct searches, so the result cache holds only the popular ones, as with real traffic.
 */
const CATEGORIES = ['tech', 'finance', 'travel', 'health', 'facts'];
const pick = (list) => list[Math.floor(Math.random() * list.length)];
// Zipf-like: low indexes (common words) are drawn far more often.
const skewed = (list) => list[Math.floor(Math.random() ** 2 * list.length)];

module.exports = function setupRequest(request) {
  const words = (process.env.BENCH_SEARCH_WORDS ?? '').split(',').filter(Boolean);
  if (words.length === 0) throw new Error('BENCH_SEARCH_WORDS must be set by the scenario setup');
  const terms = Math.random() < 0.6 ? [skewed(words)] : [skewed(words), skewed(words)];
  const params = new URLSearchParams({ query: terms.join(' '), agent_name: `bench-agent-${Math.floor(Math.random() * 8)}` });
  const page = 1 + Math.floor(Math.random() ** 3 * 3);
  if (page > 1) params.set('page', String(page));
  if (Math.random() < 0.3) params.set('limit', '10');
  if (Math.random() < 0.25) params.set('category', pick(CATEGORIES));
  return { ...request, method: 'GET', path: `/api/agent?${params}` };
};
