# shellcheck shell=bash
# Sourced by the scripts in scripts/image/: Podman's settings for this
# repository, and the Debian packages the image scripts need.

# Read instead of /etc/containers/containers.conf, which stays untouched.
CONTAINERS_CONF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/containers.conf"
export CONTAINERS_CONF

# Podman as root, runc (see containers.conf), netavark and iptables for
# published ports, slirp4netns for a container that reaches the host's
# loopback (the tests' PostgreSQL), debootstrap for the stand-in base (base.sh).
image_missing_packages() {
  local tool
  for tool in podman runc slirp4netns debootstrap iptables; do
    command -v "$tool" >/dev/null || echo "$tool"
  done
  [ -x /usr/lib/podman/netavark ] || echo netavark
}

# Installs what is missing with apt-get when run as root; otherwise says what to install.
ensure_image_packages() {
  local missing
  missing=$(image_missing_packages | tr '\n' ' ')
  [ -z "${missing// /}" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing Debian packages: $missing(install them as root: apt-get install $missing)" >&2
    return 1
  fi
  echo "installing with apt-get: $missing" >&2
  apt-get update >&2
  # shellcheck disable=SC2086 # one word per package
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >&2
}

# The image every FROM line of the Dockerfile names, as Podman spells it
# (docker.io/library/... for a short name). Fails unless there is exactly one.
dockerfile_base_image() {
  local dockerfile=$1 names
  names=$(sed -nE 's/^FROM[[:space:]]+(--[^[:space:]]+[[:space:]]+)*([^[:space:]]+).*/\2/ip' "$dockerfile" | sort -u)
  if [ "$(wc -l <<<"$names")" -ne 1 ]; then
    echo "expected one base image in $dockerfile, found: $names" >&2
    return 1
  fi
  case $names in
    */*/*) echo "$names" ;;
    */*) echo "docker.io/$names" ;;
    *) echo "docker.io/library/$names" ;;
  esac
}
