# syntax=docker/dockerfile:1
# The Admin console image (serve, or `migrate` for its admin_* tables). Built from the
# repository root: docker build -f deploy/admin.Dockerfile -t tjm-admin .
# Node 24.21.0: the official image of the version the root package.json pins (`node` package).
FROM node:24.21.0-bookworm-slim AS admin
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
# With the dev dependencies: the console runs TypeScript through tsx, as `npm run admin` does.
RUN npm ci --no-audit --no-fund

COPY platform/ platform/
COPY sdk/ sdk/
COPY admin/ admin/
COPY deploy/admin-entrypoint.sh deploy/http-probe.ts deploy/

# Mount point of the admin-client volume, readable by the console's user (a new named volume
# takes its mount point's owner and mode).
RUN install -d -o node -g node -m 0700 /var/lib/tjm/admin-client

USER node
EXPOSE 8090
ENTRYPOINT ["/bin/sh", "deploy/admin-entrypoint.sh"]
