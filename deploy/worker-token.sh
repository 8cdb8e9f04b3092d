#!/bin/sh
# compose.yaml's worker token one-shots (Manager image): while a Worker has no identity in its
# state volume (mounted read-only here), leaves it a fresh single-use enrollment token for
# TJM_WORKER_POOL, labelled TJM_WORKER_LABEL; once it has enrolled, does nothing.
set -eu
token_file=/var/lib/tjm/enroll/token.json
if [ -f /var/lib/tjm-worker/identity.json ]; then
  echo "worker-token: $TJM_WORKER_LABEL is enrolled"
  exit 0
fi
umask 077
# A day: enough for a slow first start; an unused token simply expires.
sh deploy/manager-entrypoint.sh enrollment-tokens issue --pool "$TJM_WORKER_POOL" \
  --label "$TJM_WORKER_LABEL" --ttl-seconds 86400 >"$token_file.tmp"
mv "$token_file.tmp" "$token_file"
echo "worker-token: token issued for $TJM_WORKER_LABEL"
