#!/usr/bin/env bash
# Configures and builds chime.
#   scripts/build.sh test      Debug + AddressSanitizer + UndefinedBehaviorSanitizer, tests, in build/test
#   scripts/build.sh release   Release (-O2, NDEBUG), benchmarks and tools, in build/release
# The test build is a unity build (CMAKE_UNITY_BUILD: each target's sources compiled a batch at a
# time), 18 -> 13 min on 2 cores; CHIME_UNITY=OFF builds file by file, quicker to rebuild after
# editing one file. Code must compile both ways: CI builds unity.
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-test}"
jobs="${CHIME_JOBS:-$(nproc)}"
case "$kind" in
  test)
    cmake -S . -B build/test -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCHIME_SANITIZE=ON \
      -DCHIME_BUILD_TESTS=ON -DCHIME_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD="${CHIME_UNITY:-ON}"
    cmake --build build/test -j "$jobs"
    ;;
  release)
    cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCHIME_BUILD_TESTS=OFF -DCHIME_BUILD_BENCH=ON
    cmake --build build/release -j "$jobs"
    ;;
  *)
    echo "usage: $0 test|release" >&2
    exit 2
    ;;
esac
