#!/usr/bin/env bash
# deps.sh: installs the Debian packages faultline builds, tests and benches with.
# Idempotent and quiet: does nothing when every package is already installed.
set -euo pipefail
packages=(
  build-essential pkg-config
  libjemalloc-dev liburing-dev libunwind-dev binutils-dev libsqlite3-dev zlib1g-dev libzstd-dev
  libprotobuf-c-dev protobuf-c-compiler   # export --pprof: pprof's profile.proto encoded by protobuf-c
  python3 sqlite3 coreutils xz-utils
  scdoc   # the manual pages (man/*.scd) are built by make
)
optional=()   # installed when possible; the tests that need them skip with the reason otherwise
if [ "${1:-}" = "--test" ] || [ "${1:-}" = "--deb" ]; then   # make deb, and the test that builds it
  packages+=(debhelper dpkg-dev fakeroot lintian man-db)
fi
if [ "${1:-}" = "--test" ]; then
  packages+=(memcached redis-server redis-tools gcc g++ procps)
  optional+=(chromium golang-go)   # golang-go: `go tool pprof` reads export --pprof's profiles back
fi
if [ "${1:-}" = "--fuzz" ]; then   # make fuzz: clang and libFuzzer (Debian 12: libclang-rt-14-dev)
  packages+=(clang libclang-rt-14-dev)
fi
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=() missing_optional=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
for p in "${optional[@]+"${optional[@]}"}"; do installed "$p" || missing_optional+=("$p"); done
[ ${#missing[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps.sh: installing ${missing[*]}" >&2
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#missing_optional[@]} -gt 0 ]; then
  echo "deps.sh: installing ${missing_optional[*]} (optional)" >&2
  $SUDO apt-get install -y -qq --no-install-recommends "${missing_optional[@]}" >/dev/null ||
    echo "deps.sh: could not install ${missing_optional[*]}: the tests that need it will be skipped" >&2
fi
