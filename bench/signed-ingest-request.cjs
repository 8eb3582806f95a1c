'use strict';
/**
 * autocannon `setupRequest` module for the ingest scenarios (bench/scenarios.ts): every request
 * gets a fresh body of BENCH_INGEST_BATCH events, each with a new sender id (so none is a
 * duplicate), signed for BENCH_INGEST_TENANT with BENCH_INGEST_SECRET at the current second, as a
 * honeypot site signs (docs: ingestHoneypotEvents). CommonJS because autocannon `require`s it in
 * its worker threads; parameters come from the environment, which the scenario's setup sets
 * before the load starts (a worker copies the environment when it is created).
 */
const { createHmac, randomBytes } = require('node:crypto');

const INGEST_PATH = '/api/observatory/honeypot/ingest';
const run = randomBytes(6).toString('hex');
let seq = 0;

const UAS = [
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'curl/8.4.0',
  'python-requests/2.31.0',
  'Mozilla/5.0 (compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)',
];
const JA4S = [null, 't13d1516h2_8daaf6152771_02713d6af862', 't13d1517h2_8daaf6152771_b0da82dd1658', 't13d3112h2_e8f1e7e78f70_6bebaf5329ac'];

const pick = (list) => list[Math.floor(Math.random() * list.length)];
const octet = () => Math.floor(Math.random() * 256);

function event() {
  seq += 1;
  const ua = pick(UAS);
  // A quarter of the GPTBot requests come from one of its published ranges (verified), the rest
  // from anywhere (liars); everything else from random public IPv4 addresses.
  const ip = ua.includes('GPTBot') && Math.random() < 0.25 ? `52.230.152.${octet()}` : `${1 + Math.floor(Math.random() * 222)}.${octet()}.${octet()}.${1 + Math.floor(Math.random() * 254)}`;
  return {
    id: `bench-${run}-${seq}`,
    path: `/honeypot/topics/bait-${Math.floor(Math.random() ** 2 * 500)}`,
    ua,
    ip,
    ja4: pick(JA4S),
  };
}

module.exports = function setupRequest(request) {
  const tenant = process.env.BENCH_INGEST_TENANT;
  const secret = process.env.BENCH_INGEST_SECRET;
  const size = Number(process.env.BENCH_INGEST_BATCH ?? '1');
  if (!tenant || !secret) throw new Error('BENCH_INGEST_TENANT and BENCH_INGEST_SECRET must be set by the scenario setup');
  const events = Array.from({ length: size }, event);
  const body = JSON.stringify({ events });
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return {
    ...request,
    method: 'POST',
    path: INGEST_PATH,
    body,
    headers: {
      ...request.headers,
      'content-type': 'application/json',
      'x-observatory-tenant': tenant,
      'x-observatory-signature': `t=${t},v1=${v1}`,
    },
  };
};
