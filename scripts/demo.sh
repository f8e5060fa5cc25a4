#!/usr/bin/env bash
# Quick start, first command: installs dependencies, builds chime (Release), and
# starts the daemon on its embedded SQLite store with the example jobs in
# examples/jobs (shell and HTTP jobs: cron, @every, retries with backoff, a
# timeout, a job in a zone with daylight saving). Stop it with Ctrl-C.
#
# While it runs:
#   curl -s http://127.0.0.1:8712/metrics | grep ^chime_
#   curl -s http://127.0.0.1:8712/readyz
#   edit examples/jobs/*.yaml: changes apply within a second
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
chime="$PWD/build/release/cli/chime"
cd examples
echo "chime: serving the jobs in examples/jobs; metrics at http://127.0.0.1:8712/metrics"
exec "$chime" serve --jobs-dir jobs --data-dir chime-data --listen 127.0.0.1:8712 "$@"
