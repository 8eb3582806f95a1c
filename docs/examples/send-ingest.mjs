#!/usr/bin/env node
// Sends one signed honeypot event to Observatory's ingest endpoint, as a honeypot site does.
// Node 20 or later, nothing to install (node:crypto and the built-in fetch).
//
//   OBSERVATORY_URL=http://127.0.0.1:8080 TENANT=docs-mirror SIGNING_SECRET='whsec_…' \
//     node docs/examples/send-ingest.mjs
//
// TENANT is the tenant's slug, SIGNING_SECRET the secret its creation answered once.
// EVENT_ID (optional) is the event's own id: sending it again is answered as a duplicate.
// Prints the HTTP status and the answer; exits 1 unless the event was accepted.
import { createHmac } from 'node:crypto';

const base = (process.env.OBSERVATORY_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const tenant = required('TENANT');
const secret = required('SIGNING_SECRET');
const eventId = process.env.EVENT_ID ?? `example-${Date.now()}`;

// One request a honeypot saw: who asked for what, from where. Up to 500 events per request.
const body = JSON.stringify({
  events: [
    {
      id: eventId,
      path: '/honeypot/topics/llm-pricing',
      ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)',
      ip: '52.230.152.7',
    },
  ],
});

// X-Observatory-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">.
// The HMAC key is the whole secret as text, "whsec_" included. It is NOT base64-decoded, unlike
// Standard Webhooks libraries: hand them this secret and the signature will not verify.
const t = Math.floor(Date.now() / 1000);
const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

const res = await fetch(`${base}/api/observatory/honeypot/ingest`, {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    'x-observatory-tenant': tenant,
    'x-observatory-signature': `t=${t},v1=${v1}`,
  },
  body, // sent as these exact bytes: the signature covers them
});
console.log(res.status, await res.text());
if (!res.ok) process.exit(1);

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`set ${name}`);
    process.exit(2);
  }
  return value;
}
