# syntax=docker/dockerfile:1
# The Manager image: the API (two replicas in compose.yaml), its one-shots (migrate, nats-init,
# admin-client, the worker token services) and its command line. Built from the repository root:
#   docker build -f deploy/manager.Dockerfile -t tjm-manager .
# Node 24.21.0: the official image of the version the root package.json pins (`node` package).
FROM node:24.21.0-bookworm-slim AS manager
WORKDIR /app

# npm ci needs every workspace's manifest (the lockfile names them all) and the patch its
# postinstall applies to postgres.js (README, "PostgreSQL driver").
COPY package.json package-lock.json ./
COPY patches/ patches/
COPY platform/package.json platform/
COPY protocol/package.json protocol/
COPY storage/package.json storage/
COPY manager/package.json manager/
COPY worker-agent/package.json worker-agent/
COPY admin/package.json admin/
COPY sdk/package.json sdk/
COPY openapi/package.json openapi/
COPY devstack/package.json devstack/
COPY tests/package.json tests/
COPY bench/package.json bench/
# With the dev dependencies: the processes run TypeScript through tsx, as every npm script does.
RUN npm ci --no-audit --no-fund

COPY platform/ platform/
COPY protocol/ protocol/
COPY storage/ storage/
COPY manager/ manager/
COPY deploy/manager-entrypoint.sh deploy/admin-client.sh deploy/worker-token.sh deploy/http-probe.ts deploy/
COPY deploy/nats/init.ts deploy/nats/trust.ts deploy/nats/

# Mount points of compose.yaml's volumes, owned by the user the processes run as: a new named
# volume takes its mount point's owner and mode, and the Worker's state directory must be 0700.
RUN install -d -o node -g node -m 0700 /var/lib/tjm/nats-keys /var/lib/tjm/manager-nats \
      /var/lib/tjm/admin-client /var/lib/tjm/enroll /var/lib/tjm-worker \
 && install -d -o node -g node -m 0755 /var/lib/tjm/nats-trust

USER node
EXPOSE 8080
ENTRYPOINT ["/bin/sh", "deploy/manager-entrypoint.sh"]
CMD ["serve"]
