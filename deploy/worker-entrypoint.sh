#!/bin/sh
# The Worker image's entrypoint, `bun worker-agent/src/main.ts` as `npm run worker` runs it. At
# first start (no identity in WORKER_STATE_DIR) it spends the enrollment token its compose token
# service left; later starts prove the stored identity and ignore the file.
set -eu
token_file=/var/lib/tjm/enroll/token.json
if [ ! -f "$WORKER_STATE_DIR/identity.json" ] && [ -r "$token_file" ]; then
  ENROLLMENT_TOKEN=$(node -p 'JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8")).token' "$token_file")
  export ENROLLMENT_TOKEN
fi
exec bun worker-agent/src/main.ts "$@"
