#!/bin/bash
# Usage: scripts/power-campaign.sh [CUTS_PER_DRIVE]   (default 34: 102 cuts in all)
# The power-cut campaign of docs/nbd.md: real fio with verify across random
# power cuts on a page-mapped, an SLC-cached and a hybrid drive, each cut
# followed by a restart through a saved image (the test
# crates/ssdtwin-nbd/tests/power.rs, which CI runs with 4 cuts per drive).
# Prints, per drive, the cuts, the pages lost and the most lost by one cut.
set -euo pipefail
cd "$(dirname "$0")/.."
SSDTWIN_POWER_CUTS=${1:-34} cargo test --release -p ssdtwin-nbd --test power -- --nocapture 2>&1 \
  | grep -E "cuts|test result|panicked|SKIPPED"
