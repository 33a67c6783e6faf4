#!/usr/bin/env bash
# The per-preset error tables of docs/drives.md ("Errors against the
# published figures"): for each preset, `ssdtwin validate --cv --quick` (each
# figure's error on the preset, and on the preset refitted to its other
# figures: leave-one-out; figures measured as --quick measures them). Prints markdown on stdout, each preset's time
# on stderr.
#
#   scripts/cv-tables.sh [PRESET...]   (default: every preset with figures)
#
# Needs a release build (cargo build --release -p ssdtwin-cli). A preset
# costs (k + 2) × n figure measurements as `validate --quick` makes them
# (k free parameters, n figures): seconds for the 2008 drives, minutes for
# the 600p, SM2260 and ZN540, longer for the 660p's (their full-drive SLC
# cache figures).
set -euo pipefail
bin=${SSDTWIN:-target/release/ssdtwin}
presets=("$@")
if [ ${#presets[@]} -eq 0 ]; then
    presets=(intel-600p-512gb intel-660p-512gb intel-660p-1tb intel-660p-2tb intel-x25m-80gb
             ocz-core-64gb ocz-slc-64gb smi-sm2260-mlc-512gb toshiba-rc100-480gb wd-zn540)
fi
for p in "${presets[@]}"; do
    start=$(date +%s)
    "$bin" validate --cv --quick "$p"
    echo "$p: $(( $(date +%s) - start )) s" >&2
done
