#!/bin/sh
# The Admin console image's entrypoint (serve, or `migrate`). Its OAuth client's id and secret
# come from the file the admin-client service wrote at first start (admin-client volume).
set -eu
client_env=/var/lib/tjm/admin-client/client.env
if [ ! -r "$client_env" ]; then
  echo "admin-entrypoint: $client_env is missing; the admin-client service writes it" >&2
  exit 2
fi
set -a
. "$client_env"
set +a
exec node --import tsx admin/src/main.ts "$@"
