#!/usr/bin/env bash
# npm run image: builds the production image from the Dockerfile as it is,
# with daemonless Podman (as root), after making sure the base image it names
# is there (base.sh). Everything goes to stderr but the image reference,
# printed as the last line of stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/image/podman.sh
. "$here/podman.sh"

ensure_image_packages
bash "$here/base.sh"

version=$(sed -nE 's/^  "version": "([^"]+)".*/\1/p' "$root/package.json")
revision=$(git -C "$root" rev-parse --short=12 HEAD)
# An image built from uncommitted changes says so in its tag.
git -C "$root" diff --quiet HEAD -- || revision="$revision-dirty"
ref="localhost/pet-store-service:$version-$revision"

started=$(date +%s)
# --format docker keeps HEALTHCHECK (the OCI image format has no field for it).
podman build --format docker --layers \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.revision=$(git -C "$root" rev-parse HEAD)" \
  --tag "$ref" --file "$root/Dockerfile" "$root" >&2
echo "built $ref in $(($(date +%s) - started)) s" >&2
echo "$ref"
