# syntax=docker/dockerfile:1
# The Worker agent image, in two targets:
#   cpu     Debian bookworm's ffmpeg (software encoders)
#   nvidia  jellyfin-ffmpeg7 from Jellyfin's Debian repository: an ffmpeg built with NVENC/NVDEC
#           (h264_nvenc, hevc_nvenc, av1_nvenc), which loads the driver's libraries that the NVIDIA
#           Container Toolkit mounts into the container at run time; no CUDA base image is needed.
# Built from the repository root: docker build -f deploy/worker.Dockerfile --target cpu -t tjm-worker:cpu .
# Node 24.21.0 is the official image of the version the root package.json pins; Bun 1.4.5 comes
# from the pinned `bun` npm package, as `npm run worker` gets it (the binary ships in its
# @oven/bun-linux-* optional dependency).
FROM node:24.21.0-bookworm-slim AS agent
WORKDIR /app

# npm ci needs every workspace's manifest (the lockfile names them all) and the patch its
# postinstall applies (README, "PostgreSQL driver").
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
RUN npm ci --no-audit --no-fund

COPY platform/ platform/
COPY protocol/ protocol/
COPY storage/ storage/
COPY worker-agent/ worker-agent/
COPY deploy/worker-entrypoint.sh deploy/http-probe.ts deploy/

# Mount points of the state, work and enrollment volumes, owned by the agent's user: a new named
# volume takes its mount point's owner and mode, and the agent refuses a state directory that
# group or others may write.
RUN install -d -o node -g node -m 0700 /var/lib/tjm-worker /var/cache/tjm-worker /var/lib/tjm/enroll

# bun from the npm package.
ENV PATH=/app/node_modules/.bin:$PATH
USER node
ENTRYPOINT ["/bin/sh", "deploy/worker-entrypoint.sh"]

FROM agent AS nvidia
USER root
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl gnupg \
 && install -d -m 0755 /etc/apt/keyrings \
 && curl -fsSL https://repo.jellyfin.org/jellyfin_team.gpg.key | gpg --dearmor -o /etc/apt/keyrings/jellyfin.gpg \
 && printf '%s\n' 'Types: deb' 'URIs: https://repo.jellyfin.org/debian' 'Suites: bookworm' \
      'Components: main' "Architectures: $(dpkg --print-architecture)" \
      'Signed-By: /etc/apt/keyrings/jellyfin.gpg' >/etc/apt/sources.list.d/jellyfin.sources \
 && apt-get update \
 && apt-get install -y --no-install-recommends jellyfin-ffmpeg7 \
 && apt-get purge -y curl gnupg \
 && apt-get autoremove -y \
 && rm -rf /var/lib/apt/lists/*
# The toolkit mounts the driver's video (NVENC/NVDEC) and compute libraries only when asked.
ENV FFMPEG_PATH=/usr/lib/jellyfin-ffmpeg/ffmpeg \
    FFPROBE_PATH=/usr/lib/jellyfin-ffmpeg/ffprobe \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,video,utility
USER node

# Last, so that a build without --target gets the CPU image.
FROM agent AS cpu
USER root
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg \
 && rm -rf /var/lib/apt/lists/*
USER node
