#!/bin/sh
# Sends one Ed25519-signed toolset event to Observatory's empire ingest, with curl and openssl
# (OpenSSL 3: `pkeyutl -rawin` signs Ed25519).
#
#   OBSERVATORY_URL=http://127.0.0.1:8080 OBSERVATORY_TOKEN=svctok_… TOOLSET=crawler-lab \
#     PRIVATE_KEY_FILE=toolset-key.pem sh docs/examples/send-toolset-event.sh
#
# OBSERVATORY_TOKEN is an API token with `write:events`. PRIVATE_KEY_FILE is the toolset's Ed25519
# private key in PEM (`openssl genpkey -algorithm ed25519 -out toolset-key.pem`) whose public key
# was registered with POST {v1}/provenance/keys. KEY_ID (optional) is that registration's id.
# EVENT_ID (optional) is the event's own id, unique per toolset.
# Prints the answer; exits non-zero unless the event was accepted (or was a duplicate).
set -eu
OBSERVATORY_URL="${OBSERVATORY_URL:-http://127.0.0.1:8080}"
: "${OBSERVATORY_TOKEN:?set OBSERVATORY_TOKEN}"
: "${TOOLSET:?set TOOLSET}"
: "${PRIVATE_KEY_FILE:?set PRIVATE_KEY_FILE}"
EVENT_ID="${EVENT_ID:-example-$(date +%s)}"
ts=$(date -u +%Y-%m-%dT%H:%M:%SZ)

# The signed bytes: RFC 8785 JSON of {toolset, id, eventType, ts, tenant, causedBy, payload}
# with the members not sent left out, i.e. members sorted by name, no whitespace. Written by hand
# here, so the values must need no JSON escaping.
signed=$(printf '{"eventType":"crawl.page","id":"%s","payload":{"status":200,"url":"https://example.com/pricing"},"toolset":"%s","ts":"%s"}' "$EVENT_ID" "$TOOLSET" "$ts")

# Ed25519 signs the whole message at once, so openssl needs it in a file, not on a pipe.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%s' "$signed" > "$work/signed"
sig=$(openssl pkeyutl -sign -rawin -inkey "$PRIVATE_KEY_FILE" -in "$work/signed" | base64 | tr -d '\n')

key_member=""
if [ -n "${KEY_ID:-}" ]; then key_member=$(printf ',"keyId":"%s"' "$KEY_ID"); fi
body=$(printf '{"toolset":"%s","events":[{"id":"%s","eventType":"crawl.page","ts":"%s","payload":{"url":"https://example.com/pricing","status":200}%s,"signatureB64":"%s"}]}' \
  "$TOOLSET" "$EVENT_ID" "$ts" "$key_member" "$sig")

answer=$(curl -sS --fail-with-body -X POST "${OBSERVATORY_URL%/}/api/observatory/empire/ingest" \
  -H 'Content-Type: application/json' \
  -H "Authorization: Bearer $OBSERVATORY_TOKEN" \
  --data-binary "$body")
echo "$answer"
# A 200 may still reject the event (a signature that does not verify): "rejected" counts those.
case "$answer" in *'"rejected":0'*) ;; *) exit 1 ;; esac
