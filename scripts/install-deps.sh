#!/usr/bin/env bash
# Installs every Debian 12 package chime needs to build, test and benchmark.
# Safe to run repeatedly; skips apt entirely when everything is already installed.
set -euo pipefail

PACKAGES=(
  g++ cmake ninja-build pkg-config git ca-certificates tzdata python3
  libabsl-dev
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev
  libsqlite3-dev libyaml-dev
  postgresql-15 libpq-dev
  libfaketime
  libcurl4-openssl-dev libboost-dev libssl-dev
  prometheus
  nodejs npm chromium chromium-driver
)

missing=()
for p in "${PACKAGES[@]}"; do
  # The web UI's tests need Node 18 or later and npm; one installed another way (e.g. NodeSource,
  # whose nodejs conflicts with Debian's npm) will do.
  if [[ "$p" == nodejs || "$p" == npm ]] && command -v node >/dev/null && command -v npm >/dev/null; then
    continue
  fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "Installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
