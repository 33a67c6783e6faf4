#!/bin/bash
# Usage: scripts/power-campaign.sh [CUTS_PER_DRIVE]   (default 34: 102 cuts in all, twice)
# The power-cut campaigns of docs/nbd-power.md, each across random power cuts on a
# page-mapped, an SLC-cached and a hybrid drive, each cut followed by a
# restart through a saved image:
#  - real fio with verify (crates/ssdtwin-nbd/tests/power.rs; CI runs 4
#    cuts per drive);
#  - the kernel's ext4 through nbdfuse and a loop device, fsynced files read
#    back and `e2fsck -fn` after every cut (tests/fs_power.rs; CI runs 2 per
#    drive; needs root, /dev/fuse and loop devices, else it is skipped).
# Prints, per drive, the cuts, the pages lost and the most lost by one cut,
# and for the filesystem what the kernel sent (writes, FUA, flushes) and the
# wire audit of the lost pages (server/wire.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
cuts=${1:-34}
export PATH="$PATH:/usr/sbin:/sbin"
SSDTWIN_POWER_CUTS=$cuts SSDTWIN_FS_POWER_CUTS=$cuts \
  cargo test --release -p ssdtwin-nbd --test power --test fs_power -- --nocapture 2>&1 \
  | grep -E "cuts|kernel sent|test result|panicked|SKIPPED"
