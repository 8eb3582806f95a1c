#!/bin/sh
# Sends one signed honeypot event to Observatory's ingest endpoint, with curl and openssl.
#
#   OBSERVATORY_URL=http://127.0.0.1:8080 TENANT=docs-mirror SIGNING_SECRET='whsec_…' \
#     sh docs/examples/send-ingest.sh
#
# TENANT is the tenant's slug, SIGNING_SECRET the secret its creation answered once.
# EVENT_ID (optional) is the event's own id: sending it again is answered as a duplicate.
# Prints the answer; exits non-zero unless the event was accepted.
set -eu
OBSERVATORY_URL="${OBSERVATORY_URL:-http://127.0.0.1:8080}"
: "${TENANT:?set TENANT}"
: "${SIGNING_SECRET:?set SIGNING_SECRET}"
EVENT_ID="${EVENT_ID:-example-$(date +%s)}"

# The exact bytes sent; the signature covers them. (EVENT_ID must need no JSON escaping.)
body=$(printf '{"events":[{"id":"%s","path":"/honeypot/topics/llm-pricing","ua":"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)","ip":"52.230.152.7"}]}' "$EVENT_ID")

# v1 = hex HMAC-SHA256 of "<t>.<body>". The key is the whole secret as text, "whsec_" included,
# NOT base64-decoded as Standard Webhooks does. (openssl -hmac puts the secret on the command
# line, where other users of this machine can see it in the process list.)
t=$(date +%s)
v1=$(printf '%s.%s' "$t" "$body" | openssl dgst -sha256 -hmac "$SIGNING_SECRET" -r | cut -d' ' -f1)

curl -sS --fail-with-body -X POST "${OBSERVATORY_URL%/}/api/observatory/honeypot/ingest" \
  -H 'Content-Type: application/json' \
  -H "X-Observatory-Tenant: $TENANT" \
  -H "X-Observatory-Signature: t=$t,v1=$v1" \
  --data-binary "$body"
echo
