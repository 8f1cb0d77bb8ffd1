#!/bin/sh
# The job itself: replace with yours. holdfast passes it HOLDFAST_FENCE, a
# number that goes up with every run: hand it to whatever it writes to, so a
# run that was paused past its lease is refused there (docs/fencing.md).
set -eu
echo "report for $(date -u +%F) built on $(hostname), fence $HOLDFAST_FENCE"
