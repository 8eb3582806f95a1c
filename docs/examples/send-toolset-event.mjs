#!/usr/bin/env node
// Sends one Ed25519-signed toolset event to Observatory's empire ingest, as a toolset does.
// Node 20 or later, nothing to install (node:crypto, node:fs and the built-in fetch).
//
//   OBSERVATORY_URL=http://127.0.0.1:8080 OBSERVATORY_TOKEN=svctok_… TOOLSET=crawler-lab \
//     PRIVATE_KEY_FILE=toolset-key.pem node docs/examples/send-toolset-event.mjs
//
// OBSERVATORY_TOKEN is an API token with `write:events`. PRIVATE_KEY_FILE is the toolset's Ed25519
// private key in PEM (`openssl genpkey -algorithm ed25519 -out toolset-key.pem`) whose public key
// was registered with POST {v1}/provenance/keys. KEY_ID (optional) is that registration's id: with
// it only that key is tried. EVENT_ID (optional) is the event's own id, unique per toolset.
// Prints the HTTP status and the answer; exits 1 unless the event was admitted with its signature.
import { createPrivateKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';

const base = (process.env.OBSERVATORY_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const token = required('OBSERVATORY_TOKEN');
const toolset = required('TOOLSET');
const privateKey = createPrivateKey(readFileSync(required('PRIVATE_KEY_FILE')));
const keyId = process.env.KEY_ID;

const event = {
  id: process.env.EVENT_ID ?? `example-${Date.now()}`,
  eventType: 'crawl.page',
  ts: new Date().toISOString(),
  payload: { url: 'https://example.com/pricing', status: 200 },
};

// The signed bytes: RFC 8785 (JCS) JSON of {toolset, id, eventType, ts, tenant, causedBy, payload},
// members not sent left out. keyId and signatureB64 are not signed.
const signed = canonical({ toolset, id: event.id, eventType: event.eventType, ts: event.ts, payload: event.payload });
const signatureB64 = sign(null, Buffer.from(signed, 'utf8'), privateKey).toString('base64');

const res = await fetch(`${base}/api/observatory/empire/ingest`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  body: JSON.stringify({ toolset, events: [{ ...event, ...(keyId ? { keyId } : {}), signatureB64 }] }),
});
const text = await res.text();
console.log(res.status, text);
const result = res.ok ? JSON.parse(text).results[0] : null;
if (!result || result.rejectionReason !== null || result.compatMode) process.exit(1);

/**
 * RFC 8785 for JSON data: object members sorted by their UTF-16 code units, no whitespace,
 * strings and numbers written as JSON.stringify writes them (which is what RFC 8785 specifies).
 */
function canonical(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
}

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`set ${name}`);
    process.exit(2);
  }
  return value;
}
