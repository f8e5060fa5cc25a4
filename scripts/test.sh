#!/usr/bin/env bash
# Quick start, second command: installs dependencies, builds the sanitized test build, and runs
# every test (unit, property, fuzz-corpus regression, CLI integration). CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh test
cd build/test
ctest --output-on-failure -j "${CHIME_JOBS:-$(nproc)}" --timeout 600
