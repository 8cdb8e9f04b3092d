#!/bin/sh
# The Manager image's entrypoint: `manager` with any of its commands (serve, migrate, accounts
# create …), as `node --import tsx manager/src/main.node.ts` (README, "Runtimes") so that the
# process gets the container's signals itself. With NATS_AUTH=jwt the NATS account's public key
# and signing seed come from the file nats-init wrote into the manager-nats volume, never from
# the env file.
set -eu
account_env=/var/lib/tjm/manager-nats/account.env
if [ "${NATS_AUTH:-jwt}" = "jwt" ]; then
  if [ ! -r "$account_env" ]; then
    echo "manager-entrypoint: $account_env is missing; the nats-init service writes it" >&2
    exit 2
  fi
  set -a
  . "$account_env"
  set +a
fi
exec node --import tsx manager/src/main.node.ts "$@"
