#!/usr/bin/env bash
# deps.sh: installs the Debian packages faultline builds, tests and benches with.
# Idempotent and quiet: does nothing when every package is already installed.
set -euo pipefail
packages=(
  build-essential pkg-config
  libjemalloc-dev liburing-dev libunwind-dev binutils-dev libsqlite3-dev zlib1g-dev
  python3 sqlite3 coreutils xz-utils
)
if [ "${1:-}" = "--test" ]; then
  packages+=(memcached redis-server redis-tools gcc chromium)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps.sh: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
