#!/bin/sh
# compose.yaml's admin-client one-shot (Manager image): registers the Admin console's OAuth
# client at first start and leaves its id and secret (ADMIN_CLIENT_ID, ADMIN_CLIENT_SECRET) where
# the console's entrypoint reads them. Every later start finds the file and changes nothing.
set -eu
client_env=/var/lib/tjm/admin-client/client.env
if [ -s "$client_env" ]; then
  echo "admin-client: already registered"
  exit 0
fi
# The console signs every account in: account-portal for all, the operations audience for
# operators, admin-console for client admins (the provider issues each by the account's roles).
set -- clients create --name "Admin console" --first-party \
  --grant authorization_code --grant refresh_token --resource "$OIDC_OPERATIONS_ADMIN_AUDIENCE" \
  --resource account-portal --resource admin-console \
  --redirect-uri "$ADMIN_PUBLIC_URL/auth/callback" \
  --post-logout-redirect-uri "$ADMIN_PUBLIC_URL/auth/signed-out"
# Back-channel logout only where the Managers can reach the console by its public name: over
# http://localhost that name is each Manager's own loopback.
case "$ADMIN_PUBLIC_URL" in
https://*) set -- "$@" --backchannel-logout-uri "$ADMIN_PUBLIC_URL/auth/backchannel-logout" ;;
esac
created=$(sh deploy/manager-entrypoint.sh "$@")
umask 077
printf '%s' "$created" | node -e '
  let text = "";
  process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => {
    const { clientId, clientSecret } = JSON.parse(text);
    process.stdout.write(`ADMIN_CLIENT_ID=${clientId}\nADMIN_CLIENT_SECRET=${clientSecret}\n`);
  });' >"$client_env.tmp"
mv "$client_env.tmp" "$client_env"
echo "admin-client: registered"
