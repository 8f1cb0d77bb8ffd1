#!/bin/sh
# Run by cron on every host (see crontab); holdfast lets exactly one of them run
# ./report.sh each day. The key names the day, so tomorrow's run is a new key
# (JOB_KEY names another, e.g. to try it again today).
#
# Exit status: report.sh's own when it ran here; 0 when it was done already
# (it ran on some host and exited 0, within --retain); 75 (EX_TEMPFAIL) when
# another host is running it right now; the rest as `holdfast --help` lists
# them (69 service unreachable, 78 not configured...). A monitor that alerts on
# a non-zero status should take 75 as "fine, elsewhere".
set -eu
cd "$(dirname "$0")"
# holdfast from this directory's `npm install`, else from PATH (`npm install -g holdfast`).
PATH="$PWD/node_modules/.bin:$PATH"

exec holdfast run --once "${JOB_KEY:-nightly-report-$(date -u +%F)}" --retain 2d --ttl 1m \
  --holder "nightly-report@$(hostname) pid $$" -- ./report.sh
