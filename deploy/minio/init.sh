#!/bin/sh
# compose.yaml's minio-init one-shot (in the mc image): TJM's own MinIO user with read/write
# access, the buckets, and an expiry for what zombie attempts leave under .tjm-staging/
# (README, "Outputs and zombies"). Incomplete multipart uploads in every bucket are MinIO's own
# stale-uploads expiry, set on the minio service in compose.yaml. Safe to run at every start.
set -eu

mc alias set local http://minio:9000 "$MINIO_ROOT_USER" "$MINIO_ROOT_PASSWORD" >/dev/null

# TJM signs in with a user of its own, not the root credentials.
mc admin user add local "$TJM_S3_ACCESS_KEY_ID" "$TJM_S3_SECRET_ACCESS_KEY"
# Attaching an attached policy is refused; on later starts that refusal is the expected answer.
mc admin policy attach local readwrite --user "$TJM_S3_ACCESS_KEY_ID" 2>/dev/null || true

for bucket in $TJM_BUCKETS; do
  mc mb --ignore-existing "local/$bucket"
  # Shell builtins only: nothing but mc and a shell is assumed in the mc image.
  rules=$(mc ilm rule ls "local/$bucket" 2>/dev/null || true)
  case "$rules" in
  *tjm-staging*) ;;
  *) mc ilm rule add --prefix ".tjm-staging/" --expire-days 7 "local/$bucket" ;;
  esac
done
echo "minio-init: buckets ready: $TJM_BUCKETS"
