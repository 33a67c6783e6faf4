#!/usr/bin/env bash
# Sets up what the tests need on a fresh machine (run by scripts/test.sh,
# the README's test command, before any test):
#
#  1. The real clients the tests drive, from Debian's packages: headless
#     Chromium opens the HTML report; fio checks fio's formats and drives
#     `ssdtwin serve`; nbdinfo (libnbd-bin), nbdfuse (its own package from
#     Debian 13 on, part of libnbd-bin before), qemu-img (qemu-utils),
#     mkfs.ext4/debugfs/e2fsck (e2fsprogs) and mount (ext4 on a loop device
#     over nbdfuse, in the power-cut campaign) talk to the NBD server;
#     fusermount3 (fuse3) unmounts nbdfuse; openssl makes the certificates
#     of the TLS tests; libssl-dev and pkg-config build the optional
#     `tls-psk` feature (TLS with pre-shared keys through OpenSSL), whose
#     tests scripts/test.sh runs after this setup.
#     Whatever is missing is installed with apt-get when running as root
#     (or through `sudo -n` when that works without a password). Otherwise
#     the script names the packages and the command that installs them,
#     and fails.
#  2. The test virtual environment (Python packages from PyPI, never the
#     system's): fio's own helper scripts run under `env python3` and
#     import six (fio_jsonplus_clat2csv), numpy and pandas
#     (fiologparser_hist.py), so scripts/test.sh puts the venv first on
#     PATH while the Rust tests run. scripts/test-python.sh adds the Python
#     package's own test dependencies to the same venv.
#
# Usage: scripts/test-setup.sh [--dry-run]
#   --dry-run   say what would be installed; install nothing (exit 0)
# Environment: PYTHON (default python3), SSDTWIN_VENV (default
# $CARGO_TARGET_DIR/py-venv or target/py-venv).
set -euo pipefail
cd "$(dirname "$0")/.."

dry_run=0
case "${1:-}" in
    --dry-run) dry_run=1 ;;
    "") ;;
    *) echo "usage: $0 [--dry-run]" >&2; exit 2 ;;
esac

# Each tool the tests run, and the Debian package that provides it.
tools=(
    "chromium:chromium"
    "fio:fio"
    "fio_jsonplus_clat2csv:fio"
    "nbdinfo:libnbd-bin"
    "nbdcopy:libnbd-bin"
    "nbdfuse:nbdfuse"
    "fusermount3:fuse3"
    "mount:mount"
    "qemu-img:qemu-utils"
    "mkfs.ext4:e2fsprogs"
    "debugfs:e2fsprogs"
    "e2fsck:e2fsprogs"
    "openssl:openssl"
    "pkg-config:pkg-config"
)
need=()
for entry in "${tools[@]}"; do
    tool="${entry%%:*}"
    pkg="${entry#*:}"
    # Debian puts mkfs.ext4 and friends in /usr/sbin, not on every user's PATH.
    if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ] && [ ! -x "/sbin/$tool" ]; then
        case " ${need[*]:-} " in *" $pkg "*) ;; *) need+=("$pkg") ;; esac
    fi
done

# OpenSSL's headers and library for the `tls-psk` feature (openssl-sys
# finds them through pkg-config).
if ! pkg-config --exists openssl 2>/dev/null; then
    case " ${need[*]:-} " in *" libssl-dev "*) ;; *) need+=(libssl-dev) ;; esac
fi

# Debian 12 ships nbdfuse in libnbd-bin; Debian 13 in a package of its own.
resolve_nbdfuse() {
    if ! apt-cache show nbdfuse >/dev/null 2>&1; then
        for i in "${!need[@]}"; do [ "${need[$i]}" = nbdfuse ] && need[$i]=libnbd-bin; done
    fi
    return 0
}

if [ ${#need[@]} -eq 0 ]; then
    echo "test-setup: Debian tools present (chromium, fio, libnbd-bin, nbdfuse, fuse3, qemu-utils, e2fsprogs, mount, openssl, libssl-dev, pkg-config)"
elif [ "$dry_run" = 1 ]; then
    echo "test-setup: would install Debian packages: ${need[*]}"
else
    if [ "$(id -u)" = 0 ]; then
        sudo=()
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo=(sudo -n)
    else
        sudo=(unavailable)
    fi
    if ! command -v apt-get >/dev/null 2>&1 || [ "${sudo[0]:-}" = unavailable ]; then
        command -v apt-cache >/dev/null 2>&1 && resolve_nbdfuse
        {
            echo "test-setup: the tests need these Debian packages, which are missing: ${need[*]}"
            if command -v apt-get >/dev/null 2>&1; then
                echo "test-setup: not running as root (and sudo needs a password): install them once with"
                echo "    sudo apt-get update && sudo apt-get install -y ${need[*]}"
            else
                echo "test-setup: no apt-get here: install the equivalent packages with your system's package manager"
            fi
            echo "test-setup: then run this command again."
        } >&2
        exit 1
    fi
    echo "test-setup: installing Debian packages: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    resolve_nbdfuse
    "${sudo[@]}" apt-get install -y -qq "${need[@]}"
fi

target="${CARGO_TARGET_DIR:-$PWD/target}"
venv="${SSDTWIN_VENV:-$target/py-venv}"
py="${PYTHON:-python3}"
if [ "$dry_run" = 1 ]; then
    echo "test-setup: would make the test venv $venv with six, numpy, pandas"
    exit 0
fi
if [ ! -x "$venv/bin/python" ]; then
    echo "test-setup: making the test venv $venv"
    "$py" -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import six, numpy, pandas" 2>/dev/null; then
    echo "test-setup: installing six, numpy, pandas into $venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check six numpy pandas
fi
