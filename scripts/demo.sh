#!/usr/bin/env bash
# Quick start, first command: installs dependencies, builds chime (Release), and runs its main job.
# At this stage that is the schedule engine: explain an example schedule across a daylight-saving
# change, and list its next fire times.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
chime=build/release/cli/chime
set -x
"$chime" cron explain "30 2 * * *" --tz Europe/Berlin --from 2026-03-27T00:00:00Z -n 5
"$chime" cron next "0 9 * * MON-FRI" --tz America/New_York -n 5
